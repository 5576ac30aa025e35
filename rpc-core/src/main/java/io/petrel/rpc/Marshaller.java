package io.petrel.rpc;

import io.netty.buffer.ByteBuf;

/**
 * Turns values of one type into bytes and back, directly on Netty buffers so that no intermediate array is
 * needed. Implementations must be thread-safe and must not retain or release the buffers they are given.
 *
 * @param <T> the value type
 */
public interface Marshaller<T> {

  /**
   * The exact number of bytes {@link #write} will produce for {@code value}, so that the transport can
   * allocate one buffer of the right size for the whole frame. Return -1 if it is not known in advance.
   */
  int serializedSize(T value);

  /** Appends the encoding of {@code value} at the writer index of {@code out}. */
  void write(T value, ByteBuf out) throws Exception;

  /**
   * Decodes a value from the readable bytes of {@code in} (all of them belong to this value). The buffer
   * stays owned by the caller; the returned value must not refer to it.
   */
  T read(ByteBuf in) throws Exception;
}

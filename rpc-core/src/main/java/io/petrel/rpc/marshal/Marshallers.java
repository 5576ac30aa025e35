package io.petrel.rpc.marshal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.petrel.rpc.Marshaller;

/** Marshallers for opaque bodies and for calls without a value. */
public final class Marshallers {
  private Marshallers() {}

  private static final Marshaller<byte[]> BYTES = new Marshaller<>() {
    @Override
    public int serializedSize(byte[] value) {
      return value.length;
    }

    @Override
    public void write(byte[] value, ByteBuf out) {
      out.writeBytes(value);
    }

    @Override
    public byte[] read(ByteBuf in) {
      return ByteBufUtil.getBytes(in);
    }
  };

  private static final Marshaller<Void> VOID = new Marshaller<>() {
    @Override
    public int serializedSize(Void value) {
      return 0;
    }

    @Override
    public void write(Void value, ByteBuf out) {}

    @Override
    public Void read(ByteBuf in) {
      return null;
    }
  };

  /** The body is the array's bytes as they are (opaque payloads). */
  public static Marshaller<byte[]> bytes() {
    return BYTES;
  }

  /** An empty body; reads as null. For methods that return void. */
  public static Marshaller<Void> empty() {
    return VOID;
  }
}

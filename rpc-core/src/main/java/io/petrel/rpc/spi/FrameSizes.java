package io.petrel.rpc.spi;

import io.netty.buffer.ByteBufUtil;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.Status;

/**
 * Sizes as the protocol counts them (docs/protocol.md), for every transport that enforces {@code maxFrameSize}
 * and {@code maxMetadataSize}: the in-process one counts what Netty would put on the wire, so a limit means the
 * same on both.
 */
public final class FrameSizes {
  private FrameSizes() {}

  /** Encoded size of metadata: per entry 2 + key + 1 + 4 + value bytes. */
  public static int metadataSize(Metadata metadata) {
    if (metadata.isEmpty()) {
      return 0;
    }
    int size = 0;
    for (Metadata.Entry e : metadata.entries()) {
      byte[] binary = e.binaryValue();
      size += 2 + e.key().length() + 1 + 4 + (binary != null ? binary.length : ByteBufUtil.utf8Bytes(e.stringValue()));
    }
    return size;
  }

  /** A message or its metadata is over a size limit; carries the status to report (RESOURCE_EXHAUSTED). */
  public static final class TooLarge extends Exception {
    private static final long serialVersionUID = 1L;
    public final transient Status status;

    public TooLarge(Status status) {
      super(status.description(), null, false, false);
      this.status = status;
    }
  }
}

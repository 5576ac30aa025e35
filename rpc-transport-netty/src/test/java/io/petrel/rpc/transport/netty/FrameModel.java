package io.petrel.rpc.transport.netty;

/**
 * A reference reading of docs/protocol.md, written independently of {@link FrameDecoder}: what the bytes of a
 * stream at a given offset are (a complete frame, an over-size frame, a violation, or not enough bytes yet).
 * The fuzz test compares the decoder's output with it. Deliberately simple and slow: whole-array reads, no
 * state.
 */
final class FrameModel {
  enum Kind {
    /** Not enough bytes to tell; no violation among the bytes present. */
    INCOMPLETE,
    /** A protocol violation is visible in the bytes present. */
    INVALID,
    /** A complete, valid frame within the limits. */
    FRAME,
    /** A valid header declaring a frame over {@code maxFrameSize} or metadata over {@code maxMetadataSize}. */
    OVERSIZE
  }

  final Kind kind;
  /** The header's fields (0 unless the header is complete and consistent). */
  final long length;
  final long metadataLength;
  final long bodyLength;

  private FrameModel(Kind kind, long length, long metadataLength, long bodyLength) {
    this.kind = kind;
    this.length = length;
    this.metadataLength = metadataLength;
    this.bodyLength = bodyLength;
  }

  /** Size of the whole frame on the wire: the length field and what it counts. */
  long frameSize() {
    return 4 + length;
  }

  static FrameModel at(byte[] s, long position, int maxFrameSize, int maxMetadataSize) {
    long available = s.length - position;
    int p = (int) Math.min(position, s.length);
    if (available >= 6 && u16(s, p + 4) != 0x5052) {
      return of(Kind.INVALID);
    }
    if (available >= 7 && s[p + 6] != 1) {
      return of(Kind.INVALID);
    }
    if (available < 32) {
      return of(Kind.INCOMPLETE);
    }
    int type = s[p + 7];
    long length = u32(s, p);
    long metadataLength = u32(s, p + 24);
    long bodyLength = u32(s, p + 28);
    if (type < 1 || type > 8 || length != 28 + metadataLength + bodyLength) { // 1 REQUEST .. 8 SETTINGS
      return of(Kind.INVALID);
    }
    if (4 + length > maxFrameSize || metadataLength > maxMetadataSize) {
      return new FrameModel(Kind.OVERSIZE, length, metadataLength, bodyLength);
    }
    if (available < 4 + length) {
      return new FrameModel(Kind.INCOMPLETE, length, metadataLength, bodyLength);
    }
    Kind kind = metadataIsValid(s, p + 32, (int) metadataLength) ? Kind.FRAME : Kind.INVALID;
    return new FrameModel(kind, length, metadataLength, bodyLength);
  }

  /** Entries of 2-byte key length (1..255), key of {@code a-z 0-9 - _ .}, kind 0 or 1, 4-byte value length. */
  private static boolean metadataIsValid(byte[] s, int start, int length) {
    int end = start + length;
    int i = start;
    while (i < end) {
      if (end - i < 2) {
        return false;
      }
      int keyLength = u16(s, i);
      i += 2;
      if (keyLength < 1 || keyLength > 255 || end - i < keyLength + 5) {
        return false;
      }
      for (int j = 0; j < keyLength; j++) {
        char c = (char) s[i + j];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) {
          return false;
        }
      }
      i += keyLength;
      int kind = s[i++];
      if (kind != 0 && kind != 1) {
        return false;
      }
      long valueLength = u32(s, i);
      i += 4;
      if (valueLength > end - i) {
        return false;
      }
      i += (int) valueLength;
    }
    return true;
  }

  private static FrameModel of(Kind kind) {
    return new FrameModel(kind, 0, 0, 0);
  }

  static int u16(byte[] s, int i) {
    return ((s[i] & 0xff) << 8) | (s[i + 1] & 0xff);
  }

  static long u32(byte[] s, int i) {
    return ((long) (s[i] & 0xff) << 24) | ((s[i + 1] & 0xff) << 16) | ((s[i + 2] & 0xff) << 8) | (s[i + 3] & 0xff);
  }

  static int i32(byte[] s, int i) {
    return (int) u32(s, i);
  }
}

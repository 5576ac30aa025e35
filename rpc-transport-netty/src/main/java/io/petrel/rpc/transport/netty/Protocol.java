package io.petrel.rpc.transport.netty;

/**
 * Wire protocol constants; docs/protocol.md is the specification and must agree with this file.
 *
 * <pre>
 * offset size field
 *  0     4    length          bytes after this field: 28 + metadata length + body length (u32, big-endian)
 *  4     2    magic           0x5052 ("PR")
 *  6     1    version         1
 *  7     1    type            1 request, 2 response, 3 oneway, 4 ping, 5 pong, 6 goaway, 7 cancel, 8 settings
 *  8     1    flags           0x04 REFUSED on an error response; 0x01, 0x02 reserved for streams; receivers ignore unknown bits
 *  9     1    status          status code of a response; 0 in every other frame
 * 10     2    reserved        0
 * 12     4    request id      chosen by the client, unique among its in-flight calls on the connection
 * 16     4    method id       FNV-1a of "service/method" (requests and oneways); 0 otherwise
 * 20     4    timeout         remaining deadline in milliseconds (requests), 0 = none
 * 24     4    metadata length (u32)
 * 28     4    body length     (u32)
 * 32     ...  metadata, then body
 * </pre>
 *
 * <p>A SETTINGS body is a sequence of 6-byte entries: setting id (u16), value (u32); see {@link #SETTINGS_ENTRY_SIZE}.
 */
final class Protocol {
  private Protocol() {}

  static final int MAGIC = 0x5052;
  static final int VERSION = 1;
  static final int HEADER_SIZE = 32;
  /** The length field counts the header after itself. */
  static final int LENGTH_FIELD_SIZE = 4;
  static final int MIN_LENGTH = HEADER_SIZE - LENGTH_FIELD_SIZE;

  static final int OFF_LENGTH = 0;
  static final int OFF_MAGIC = 4;
  static final int OFF_VERSION = 6;
  static final int OFF_TYPE = 7;
  static final int OFF_FLAGS = 8;
  static final int OFF_STATUS = 9;
  static final int OFF_RESERVED = 10;
  static final int OFF_REQUEST_ID = 12;
  static final int OFF_METHOD_ID = 16;
  static final int OFF_TIMEOUT = 20;
  static final int OFF_METADATA_LENGTH = 24;
  static final int OFF_BODY_LENGTH = 28;

  static final byte TYPE_REQUEST = 1;
  static final byte TYPE_RESPONSE = 2;
  static final byte TYPE_ONEWAY = 3;
  static final byte TYPE_PING = 4;
  static final byte TYPE_PONG = 5;
  static final byte TYPE_GOAWAY = 6;
  static final byte TYPE_CANCEL = 7;
  /** The server's limits, its first frame on a connection (docs/protocol.md, "SETTINGS"). */
  static final byte TYPE_SETTINGS = 8;
  /** The highest frame type this version knows; a receiver rejects higher ones. */
  static final byte MAX_TYPE = TYPE_SETTINGS;

  /**
   * Flag of a RESPONSE with a status other than 0: the server refused the request before any handler saw it (a
   * limit, or its shutdown), so the client may send it to another server without running it twice
   * (docs/protocol.md, "Refusals"). Receivers that do not know it read the status as before.
   */
  static final byte FLAG_REFUSED = 0x04;

  /** Bytes per SETTINGS entry: id (u16), value (u32). */
  static final int SETTINGS_ENTRY_SIZE = 6;
  /** SETTINGS ids. Receivers ignore ids they do not know. */
  static final int SETTING_MAX_CONCURRENT_CALLS = 1;
  static final int SETTING_MAX_FRAME_SIZE = 2;
  static final int SETTING_MAX_METADATA_SIZE = 3;

  /** Metadata value kinds. */
  static final byte META_STRING = 0;
  static final byte META_BINARY = 1;

  static String typeName(int type) {
    switch (type) {
      case TYPE_REQUEST: return "REQUEST";
      case TYPE_RESPONSE: return "RESPONSE";
      case TYPE_ONEWAY: return "ONEWAY";
      case TYPE_PING: return "PING";
      case TYPE_PONG: return "PONG";
      case TYPE_GOAWAY: return "GOAWAY";
      case TYPE_CANCEL: return "CANCEL";
      case TYPE_SETTINGS: return "SETTINGS";
      default: return "UNKNOWN(" + type + ")";
    }
  }
}

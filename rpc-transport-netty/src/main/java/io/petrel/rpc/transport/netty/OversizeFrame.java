package io.petrel.rpc.transport.netty;

/**
 * Emitted by {@link FrameDecoder} instead of a frame whose size exceeds the receiver's limit. The header was
 * read, the rest of the frame is skipped without being buffered, and the handler answers the call with
 * RESOURCE_EXHAUSTED: the connection stays usable.
 */
record OversizeFrame(byte type, int requestId, int methodId, long frameSize, long limit, String what) {}

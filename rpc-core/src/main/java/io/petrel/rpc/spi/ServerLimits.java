package io.petrel.rpc.spi;

/**
 * The server's protections against peers that misbehave or vanish, validated by
 * {@link io.petrel.rpc.RpcServerBuilder}; docs/configuration.md gives each default and what happens at the
 * limit. A duration of 0 turns that check off.
 *
 * @param handshakeTimeoutNanos a new connection must deliver its first complete frame within this
 * @param idleTimeoutNanos a connection with no call in flight and none started for this long is sent GOAWAY and
 *     closed (keepalive PINGs do not count as calls)
 * @param keepAliveTimeNanos after this long without receiving anything the server sends a PING
 * @param keepAliveTimeoutNanos a PING unanswered (nothing received) for this long closes the connection
 * @param frameReceiveTimeoutNanos a frame whose first bytes arrived must be complete within this
 * @param maxConnectionAgeNanos a connection older than this (with +-10% jitter) is sent GOAWAY, then closed once
 *     its calls end or the shutdown grace period passes; 0 = no maximum age
 * @param unwritableTimeoutNanos a peer that keeps the connection's unsent responses above the high water mark
 *     for this long (it does not read) is disconnected
 * @param maxConnectionsPerAddress connections open at once from one remote IP address
 * @param maxBufferedBytes server-wide cap on memory for partially received frames and for encoded responses
 *     waiting for the event loop
 */
public record ServerLimits(
    long handshakeTimeoutNanos,
    long idleTimeoutNanos,
    long keepAliveTimeNanos,
    long keepAliveTimeoutNanos,
    long frameReceiveTimeoutNanos,
    long maxConnectionAgeNanos,
    long unwritableTimeoutNanos,
    int maxConnectionsPerAddress,
    long maxBufferedBytes) {}

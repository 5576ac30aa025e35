package io.petrel.rpc.spi;

import io.petrel.rpc.IoMode;
import java.net.InetSocketAddress;
import java.util.concurrent.Executor;

/**
 * The validated settings of a client, handed by {@link io.petrel.rpc.RpcClientBuilder} to the transport.
 *
 * @param callbackExecutor where futures complete; null means on the connection's event loop
 */
public record ClientConfig(
    InetSocketAddress address,
    int connectionsPerEndpoint,
    IoMode ioMode,
    int ioThreads,
    long defaultTimeoutNanos,
    long connectTimeoutNanos,
    int maxFrameSize,
    int maxMetadataSize,
    int maxPendingCalls,
    long reconnectInitialBackoffNanos,
    long reconnectMaxBackoffNanos,
    int writeBufferLowWaterMark,
    int writeBufferHighWaterMark,
    Executor callbackExecutor,
    String name) {}

package io.petrel.rpc.spi;

import io.micrometer.core.instrument.MeterRegistry;
import io.petrel.rpc.IoMode;
import io.petrel.rpc.ServerInterceptor;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.TlsConfig;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The validated settings of a server, handed by {@link io.petrel.rpc.RpcServerBuilder} to the transport.
 *
 * @param bindAddress where a network transport listens; null for an in-process server
 *     ({@code RpcServerBuilder.inProcess}, whose transport the builder makes itself)
 * @param executor the user's business executor, or null for the built-in bounded pool (unless {@code direct})
 * @param direct run handlers on the event loop (for non-blocking services)
 * @param meterRegistry where metrics go, or null for none
 * @param limits timeouts and limits that protect the server from peers
 * @param tls TLS settings, or null for plaintext
 */
public record ServerConfig(
    InetSocketAddress bindAddress,
    List<ServiceDefinition> services,
    List<ServerInterceptor> interceptors,
    IoMode ioMode,
    int workerThreads,
    int businessThreads,
    int businessQueueSize,
    @Nullable Executor executor,
    boolean direct,
    int maxFrameSize,
    int maxMetadataSize,
    int maxConcurrentCallsPerConnection,
    int maxConnections,
    int writeBufferLowWaterMark,
    int writeBufferHighWaterMark,
    long shutdownGracePeriodNanos,
    ServerLimits limits,
    @Nullable MeterRegistry meterRegistry,
    boolean percentileHistograms,
    String name,
    @Nullable TlsConfig tls) {}

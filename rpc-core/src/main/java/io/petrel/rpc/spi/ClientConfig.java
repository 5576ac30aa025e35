package io.petrel.rpc.spi;

import io.micrometer.core.instrument.MeterRegistry;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.IoMode;
import io.petrel.rpc.TlsConfig;
import java.util.List;
import java.util.concurrent.Executor;
import org.jspecify.annotations.Nullable;

/**
 * The validated settings of a client, handed by {@link io.petrel.rpc.RpcClientBuilder} to the transport.
 *
 * @param target what the client calls, as given to the builder ("host:port", "static://h1:7000,h2:7000")
 * @param resolver yields the endpoints of {@code target}; null for an in-process client
 *     ({@code RpcClientBuilder.inProcess}, target {@code "inprocess:name"}, made by the builder itself)
 * @param loadBalancer picks an endpoint per call when there are several
 * @param callbackExecutor where futures complete; null means on the connection's event loop
 * @param meterRegistry where metrics go, or null for none
 * @param keepAliveTimeNanos silence after which a PING is sent, and then the connection closed if the
 *     silence lasts as long again; 0 disables keepalive
 * @param tls TLS settings, or null for plaintext
 */
public record ClientConfig(
    String target,
    NameResolver resolver,
    LoadBalancer.Factory loadBalancer,
    List<ClientInterceptor> interceptors,
    int connectionsPerEndpoint,
    IoMode ioMode,
    int ioThreads,
    long defaultTimeoutNanos,
    long connectTimeoutNanos,
    long keepAliveTimeNanos,
    int maxFrameSize,
    int maxMetadataSize,
    int maxPendingCalls,
    long reconnectInitialBackoffNanos,
    long reconnectMaxBackoffNanos,
    int writeBufferLowWaterMark,
    int writeBufferHighWaterMark,
    @Nullable Executor callbackExecutor,
    @Nullable MeterRegistry meterRegistry,
    boolean percentileHistograms,
    String name,
    @Nullable TlsConfig tls) {}

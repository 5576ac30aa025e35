package io.petrel.rpc.internal;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.LoadBalancer;
import io.petrel.rpc.NameResolver;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcProvider;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServerMethodDefinition;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.internal.inprocess.InProcessClient;
import io.petrel.rpc.internal.inprocess.InProcessServerTransport;
import io.petrel.rpc.internal.lb.LoadBalancers;
import io.petrel.rpc.internal.lb.StaticResolver;
import io.petrel.rpc.internal.lb.Targets;
import io.petrel.rpc.spi.ClientConfig;
import io.petrel.rpc.spi.ServerConfig;
import io.petrel.rpc.spi.ServerLimits;
import io.petrel.rpc.spi.TransportProvider;
import io.petrel.rpc.spi.Transports;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * rpc-core's implementation of the API's builders, found by {@link RpcProvider} with the ServiceLoader: the
 * builders check the options (in the API); these parse targets, know the load-balancing policies, and make the
 * core's client ({@link ClientChannel}) and server ({@link ServerImpl}) over a transport: the in-process one, or
 * the highest-priority {@link TransportProvider} (or the one named).
 */
public final class CoreProvider extends RpcProvider {
  @Override
  protected RpcClientBuilder newClientBuilder() {
    return new ClientBuilder();
  }

  @Override
  protected RpcServerBuilder newServerBuilder() {
    return new ServerBuilder();
  }

  /** The client's builder: the API's options, and what they make. */
  static final class ClientBuilder extends RpcClientBuilder {
    @Override
    protected NameResolver resolverFor(String target) {
      return Targets.resolver(target);
    }

    @Override
    protected NameResolver resolverOf(List<Endpoint> endpoints) {
      return new StaticResolver(endpoints);
    }

    @Override
    protected LoadBalancer.Factory loadBalancerNamed(String policy) {
      return LoadBalancers.forName(policy);
    }

    @Override
    public RpcClient build() {
      if (inProcessName != null) {
        if (tls != null) {
          throw new IllegalStateException("tls(...) does not apply to an in-process client (inProcess(\""
              + inProcessName + "\")): its calls never leave the JVM; remove one of them");
        }
        if (endpointFilter != null) {
          throw new IllegalStateException("endpointFilter(...) does not apply to an in-process client (inProcess(\""
              + inProcessName + "\")): it has one server and no endpoints to choose from; remove one of them");
        }
        if (transport != null) {
          throw new IllegalStateException("transport(\"" + transport + "\") and inProcess(\"" + inProcessName
              + "\") both choose the transport; remove one of them");
        }
        String serverName = inProcessName;
        ClientConfig config = config();
        return new ClientChannel(config, true,
            runtime -> new InProcessClient(serverName, config, runtime));
      }
      if (resolver == null) {
        throw new IllegalStateException("no server to call: set address(host, port), target(...), endpoints(...)"
            + " or inProcess(name)");
      }
      ClientConfig config = config();
      TransportProvider provider = Transports.find(transport);
      return new ClientChannel(config, config.tls() != null,
          runtime -> provider.newClientTransport(config, runtime));
    }

    private ClientConfig config() {
      return ClientConfig.newBuilder().target(Objects.requireNonNull(target, "target, set with the resolver"))
          .resolver(resolver)
          .loadBalancer(loadBalancer != null ? loadBalancer : LoadBalancers.LEAST_PENDING_FACTORY)
          .interceptors(List.copyOf(interceptors)).connectionsPerEndpoint(connectionsPerEndpoint)
          .defaultTimeoutNanos(defaultDeadline.toNanos()).connectTimeoutNanos(connectTimeout.toNanos())
          .keepAliveTimeNanos(keepAliveTime.toNanos()).livenessTimeoutNanos(livenessTimeout.toNanos())
          .maxFrameSize(maxFrameSize).maxMetadataSize(maxMetadataSize).maxPendingCalls(maxPendingCalls)
          .reconnectInitialBackoffNanos(reconnectInitial.toNanos())
          .reconnectMaxBackoffNanos(reconnectMax.toNanos()).callbackExecutor(callbackExecutor)
          .maxRetries(maxRetries).retryBudget(retryBudgetTokens, retryBudgetRatio).hedging(hedging)
          .endpointFilter(endpointFilter)
          .meterRegistry(meterRegistry).percentileHistograms(percentileHistograms).name(name).tls(tls)
          .options(options()).build();
    }
  }

  /** The server's builder: the API's options, and what they make. */
  static final class ServerBuilder extends RpcServerBuilder {
    @Override
    protected void checkVirtualThreads() {
      VirtualThreadExecutor.checkAvailable();
    }

    @Override
    public RpcServer build() {
      if (port < 0 && inProcessName == null) {
        throw new IllegalStateException("no port set: call port(int), bindAddress(host, port) or inProcess(name)");
      }
      if (inProcessName != null) {
        if (tls != null) {
          throw new IllegalStateException("tls(...) does not apply to an in-process server (inProcess(\""
              + inProcessName + "\")): its calls never leave the JVM; remove one of them");
        }
        if (transport != null) {
          throw new IllegalStateException("transport(\"" + transport + "\") and inProcess(\"" + inProcessName
              + "\") both choose the transport; remove one of them");
        }
      }
      Map<Integer, String> ids = new HashMap<>();
      for (ServiceDefinition s : services) {
        for (ServerMethodDefinition<?, ?> m : s.methods()) {
          String prev = ids.putIfAbsent(m.method().id(), m.method().fullName());
          if (prev != null) {
            throw new IllegalArgumentException("methods " + prev + " and " + m.method().fullName()
                + " have the same id 0x" + Integer.toHexString(m.method().id())
                + "; rename one or give one an explicit id");
          }
        }
      }
      InetSocketAddress addr = inProcessName != null ? null
          : host == null ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
      ServerConfig config = ServerConfig.newBuilder().bindAddress(addr).services(List.copyOf(services))
          .interceptors(List.copyOf(interceptors)).exceptionMapper(exceptionMapper)
          .exceptionDetails(exceptionDetails).businessThreads(businessThreads)
          .businessQueueSize(businessQueueSize)
          .executor(virtualThreads > 0 ? new VirtualThreadExecutor(name, virtualThreads) : executor)
          .direct(direct).maxFrameSize(maxFrameSize)
          .maxMetadataSize(maxMetadataSize).maxConcurrentCallsPerConnection(maxConcurrentCallsPerConnection)
          .maxConnections(maxConnections).shutdownGracePeriodNanos(shutdownGracePeriod.toNanos())
          .lifecycleListeners(List.copyOf(lifecycleListeners)).drainDelayNanos(drainDelay.toNanos())
          .limits(ServerLimits.newBuilder().handshakeTimeoutNanos(handshakeTimeout.toNanos())
              .idleTimeoutNanos(idleTimeout.toNanos()).keepAliveTimeNanos(keepAliveTime.toNanos())
              .keepAliveTimeoutNanos(keepAliveTimeout.toNanos())
              .frameReceiveTimeoutNanos(frameReceiveTimeout.toNanos())
              .maxConnectionAgeNanos(maxConnectionAge.toNanos()).unwritableTimeoutNanos(unwritableTimeout.toNanos())
              .maxConnectionsPerAddress(maxConnectionsPerAddress).maxBufferedBytes(maxBufferedBytes)
              .maxBufferedBytesPerConnection(perConnectionBuffer()).build())
          .meterRegistry(meterRegistry).percentileHistograms(percentileHistograms).name(name).tls(tls)
          .options(options()).build();
      if (inProcessName != null) {
        return new ServerImpl(config,
            new InProcessServerTransport(inProcessName, config));
      }
      return new ServerImpl(config, Transports.find(transport).newServerTransport(config));
    }
  }
}

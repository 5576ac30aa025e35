package io.petrel.spring.boot;

import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.TlsConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Petrel's Spring Boot properties, under {@code petrel.}: the server ({@code petrel.server.*}) and one client per
 * named target ({@code petrel.clients.<name>.*}). An option left unset keeps the builder's default, which
 * docs/configuration.md lists; docs/spring-boot.md maps each property to its builder option.
 */
@ConfigurationProperties("petrel")
public class PetrelProperties {
  private final Server server = new Server();
  /** Clients by name: petrel.clients.NAME.target, petrel.clients.NAME.default-deadline and the other client options. */
  private final Map<String, Client> clients = new LinkedHashMap<>();
  private final Indicator health = new Indicator();

  public Server getServer() {
    return server;
  }

  /** {@code petrel.health.*}: what the {@code petrel} health indicator counts. */
  public Indicator getHealth() {
    return health;
  }

  /** Clients by name: {@code petrel.clients.greeter.target=127.0.0.1:7000}. One shared client per name. */
  public Map<String, Client> getClients() {
    return clients;
  }

  /** Options the server and each client both have, under {@code petrel.server.*} and {@code petrel.clients.<name>.*}. */
  public abstract static class Shared {
    /** Largest frame sent or accepted, header included (default 8MB); a larger request or response fails. */
    private @Nullable DataSize maxFrameSize;
    /** Largest metadata of one call (default 8KB). */
    private @Nullable DataSize maxMetadataSize;
    /** With nothing received for this long, send a PING (server default 60s, client 30s; 0 = off). */
    private @Nullable Duration keepAliveTime;
    /** Publish percentile histograms of call durations (default false). */
    private @Nullable Boolean percentileHistograms;
    private final Tls tls = new Tls();

    public @Nullable DataSize getMaxFrameSize() {
      return maxFrameSize;
    }

    public void setMaxFrameSize(@Nullable DataSize maxFrameSize) {
      this.maxFrameSize = maxFrameSize;
    }

    public @Nullable DataSize getMaxMetadataSize() {
      return maxMetadataSize;
    }

    public void setMaxMetadataSize(@Nullable DataSize maxMetadataSize) {
      this.maxMetadataSize = maxMetadataSize;
    }

    public @Nullable Duration getKeepAliveTime() {
      return keepAliveTime;
    }

    public void setKeepAliveTime(@Nullable Duration keepAliveTime) {
      this.keepAliveTime = keepAliveTime;
    }

    public @Nullable Boolean getPercentileHistograms() {
      return percentileHistograms;
    }

    public void setPercentileHistograms(@Nullable Boolean percentileHistograms) {
      this.percentileHistograms = percentileHistograms;
    }

    public Tls getTls() {
      return tls;
    }
  }

  /** {@code petrel.server.*}: the server that serves the context's {@code @RpcService} beans. */
  public static class Server extends Shared {
    /** Whether to serve the context's services at all. */
    private boolean enabled = true;
    /** Port to listen on (0 picks a free one). */
    private int port = 7000;
    /** Address to bind; unset binds every interface. */
    private @Nullable String address;
    /** Serve in this JVM only, under this name, without a socket (clients: inprocess:NAME); port and address unused. */
    private @Nullable String inProcessName;
    /** Name in thread names and logs (default petrel-server). */
    private @Nullable String name;
    /** Most business threads (default max(16, 4 x processors)). */
    private @Nullable Integer businessThreads;
    /** Calls that may wait for a business thread (default 2048; more are refused with RESOURCE_EXHAUSTED). */
    private @Nullable Integer businessQueueSize;
    /** Handlers run on the event loop that read the request (never block in them). */
    private boolean directExecutor;
    /** Java 21+: each handler on its own virtual thread, at most this many calls at once (unset: the pool). */
    private @Nullable Integer virtualThreads;
    /** Calls in flight per connection, announced to clients (default 1000). */
    private @Nullable Integer maxConcurrentCallsPerConnection;
    /** Open connections at most (default 10000, lowered to what the open-file limit allows). */
    private @Nullable Integer maxConnections;
    /** Open connections from one remote IP address at most (default 1000). */
    private @Nullable Integer maxConnectionsPerAddress;
    /** A new connection must deliver one whole frame (and finish TLS) within this (default 10s; 0 = off). */
    private @Nullable Duration handshakeTimeout;
    /** A frame begun must be complete within this (default 30s; 0 = off). */
    private @Nullable Duration frameReceiveTimeout;
    /** A connection with no call for this long is closed gracefully (default 5m; 0 = off). */
    private @Nullable Duration idleTimeout;
    /** After a keepalive PING, close the connection if nothing arrives within this (default 20s). */
    private @Nullable Duration keepAliveTimeout;
    /** Connections older than this (+-10% jitter) are closed gracefully (default 0 = never). */
    private @Nullable Duration maxConnectionAge;
    /** A peer that does not read its responses for this long is disconnected (default 30s; 0 = never). */
    private @Nullable Duration unwritableTimeout;
    /** Responses held for slow readers, server-wide (default a quarter of the heap or direct memory limit). */
    private @Nullable DataSize maxBufferedBytes;
    /** How long calls in flight may take to finish when the context closes (default 10s). */
    private @Nullable Duration shutdownGracePeriod;
    /**
     * What a caller learns of an exception a handler throws: declared (default) sends the class and message of an
     * exception the method declares only; all sends every exception's.
     */
    private @Nullable ExceptionDetails exceptionDetails;
    private final Health health = new Health();

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public int getPort() {
      return port;
    }

    public void setPort(int port) {
      this.port = port;
    }

    public @Nullable String getAddress() {
      return address;
    }

    public void setAddress(@Nullable String address) {
      this.address = address;
    }

    public @Nullable String getInProcessName() {
      return inProcessName;
    }

    public void setInProcessName(@Nullable String inProcessName) {
      this.inProcessName = inProcessName;
    }

    public @Nullable String getName() {
      return name;
    }

    public void setName(@Nullable String name) {
      this.name = name;
    }

    public @Nullable Integer getBusinessThreads() {
      return businessThreads;
    }

    public void setBusinessThreads(@Nullable Integer businessThreads) {
      this.businessThreads = businessThreads;
    }

    public @Nullable Integer getBusinessQueueSize() {
      return businessQueueSize;
    }

    public void setBusinessQueueSize(@Nullable Integer businessQueueSize) {
      this.businessQueueSize = businessQueueSize;
    }

    public boolean isDirectExecutor() {
      return directExecutor;
    }

    public void setDirectExecutor(boolean directExecutor) {
      this.directExecutor = directExecutor;
    }

    public @Nullable Integer getVirtualThreads() {
      return virtualThreads;
    }

    public void setVirtualThreads(@Nullable Integer virtualThreads) {
      this.virtualThreads = virtualThreads;
    }

    public @Nullable Integer getMaxConcurrentCallsPerConnection() {
      return maxConcurrentCallsPerConnection;
    }

    public void setMaxConcurrentCallsPerConnection(@Nullable Integer maxConcurrentCallsPerConnection) {
      this.maxConcurrentCallsPerConnection = maxConcurrentCallsPerConnection;
    }

    public @Nullable Integer getMaxConnections() {
      return maxConnections;
    }

    public void setMaxConnections(@Nullable Integer maxConnections) {
      this.maxConnections = maxConnections;
    }

    public @Nullable Integer getMaxConnectionsPerAddress() {
      return maxConnectionsPerAddress;
    }

    public void setMaxConnectionsPerAddress(@Nullable Integer maxConnectionsPerAddress) {
      this.maxConnectionsPerAddress = maxConnectionsPerAddress;
    }

    public @Nullable Duration getHandshakeTimeout() {
      return handshakeTimeout;
    }

    public void setHandshakeTimeout(@Nullable Duration handshakeTimeout) {
      this.handshakeTimeout = handshakeTimeout;
    }

    public @Nullable Duration getFrameReceiveTimeout() {
      return frameReceiveTimeout;
    }

    public void setFrameReceiveTimeout(@Nullable Duration frameReceiveTimeout) {
      this.frameReceiveTimeout = frameReceiveTimeout;
    }

    public @Nullable Duration getIdleTimeout() {
      return idleTimeout;
    }

    public void setIdleTimeout(@Nullable Duration idleTimeout) {
      this.idleTimeout = idleTimeout;
    }

    public @Nullable Duration getKeepAliveTimeout() {
      return keepAliveTimeout;
    }

    public void setKeepAliveTimeout(@Nullable Duration keepAliveTimeout) {
      this.keepAliveTimeout = keepAliveTimeout;
    }

    public @Nullable Duration getMaxConnectionAge() {
      return maxConnectionAge;
    }

    public void setMaxConnectionAge(@Nullable Duration maxConnectionAge) {
      this.maxConnectionAge = maxConnectionAge;
    }

    public @Nullable Duration getUnwritableTimeout() {
      return unwritableTimeout;
    }

    public void setUnwritableTimeout(@Nullable Duration unwritableTimeout) {
      this.unwritableTimeout = unwritableTimeout;
    }

    public @Nullable DataSize getMaxBufferedBytes() {
      return maxBufferedBytes;
    }

    public void setMaxBufferedBytes(@Nullable DataSize maxBufferedBytes) {
      this.maxBufferedBytes = maxBufferedBytes;
    }

    public @Nullable Duration getShutdownGracePeriod() {
      return shutdownGracePeriod;
    }

    public void setShutdownGracePeriod(@Nullable Duration shutdownGracePeriod) {
      this.shutdownGracePeriod = shutdownGracePeriod;
    }

    public @Nullable ExceptionDetails getExceptionDetails() {
      return exceptionDetails;
    }

    public void setExceptionDetails(@Nullable ExceptionDetails exceptionDetails) {
      this.exceptionDetails = exceptionDetails;
    }

    public Health getHealth() {
      return health;
    }
  }

  /**
   * {@code petrel.server.health.*}: Petrel's health service ({@code io.petrel.rpc.health.HealthService}, the service
   * {@code petrel.health.Health} that the exec probe and {@code HealthService.check} ask), served by the server.
   */
  public static class Health {
    /** Serve petrel.health.Health (the HealthService bean) on the server. */
    private boolean enabled = true;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }
  }

  /** {@code petrel.health.*}: the {@code petrel} health indicator. */
  public static class Indicator {
    /**
     * Whether a client that cannot reach its target (no endpoint ready, one backing off after a failed connect)
     * makes the indicator OUT_OF_SERVICE; by default it is only shown in the details.
     */
    private boolean clientsAffectStatus;

    public boolean isClientsAffectStatus() {
      return clientsAffectStatus;
    }

    public void setClientsAffectStatus(boolean clientsAffectStatus) {
      this.clientsAffectStatus = clientsAffectStatus;
    }
  }

  /** {@code petrel.clients.<name>.*}: one shared client. */
  public static class Client extends Shared {
    /**
     * Where to call: {@code host:port}, {@code static://h1:7000,h2:7000}, a resolver's {@code scheme://...}, or
     * {@code inprocess:NAME} (the in-process server NAME of this JVM).
     */
    private @Nullable String target;
    /** least_pending (default), round_robin or consistent_hash. */
    private @Nullable String loadBalancer;
    /** TCP connections to each endpoint (default 1). */
    private @Nullable Integer connectionsPerEndpoint;
    /** Deadline of a call that sets none (default 30s). */
    private @Nullable Duration defaultDeadline;
    /** How long a connect (and TLS handshake) may take (default 5s). */
    private @Nullable Duration connectTimeout;
    /**
     * After a call's deadline passes on a connection, how long it may receive nothing (a PING was sent) before it is
     * reset as dead (default 2s; 0 = off); above the longest pause of a server as a whole (a GC pause, a paused VM).
     */
    private @Nullable Duration livenessTimeout;
    /** Calls not yet ended at most; more fail at once with RESOURCE_EXHAUSTED (default 16384). */
    private @Nullable Integer maxPendingCalls;
    /** First wait after a failed connect, doubling each time (default 100ms). */
    private @Nullable Duration reconnectBackoffInitial;
    /** Longest wait between connect attempts (default 10s). */
    private @Nullable Duration reconnectBackoffMax;
    private final EndpointFilter endpointFilter = new EndpointFilter();

    public @Nullable String getTarget() {
      return target;
    }

    public void setTarget(@Nullable String target) {
      this.target = target;
    }

    public @Nullable String getLoadBalancer() {
      return loadBalancer;
    }

    public void setLoadBalancer(@Nullable String loadBalancer) {
      this.loadBalancer = loadBalancer;
    }

    public @Nullable Integer getConnectionsPerEndpoint() {
      return connectionsPerEndpoint;
    }

    public void setConnectionsPerEndpoint(@Nullable Integer connectionsPerEndpoint) {
      this.connectionsPerEndpoint = connectionsPerEndpoint;
    }

    public @Nullable Duration getDefaultDeadline() {
      return defaultDeadline;
    }

    public void setDefaultDeadline(@Nullable Duration defaultDeadline) {
      this.defaultDeadline = defaultDeadline;
    }

    public @Nullable Duration getConnectTimeout() {
      return connectTimeout;
    }

    public void setConnectTimeout(@Nullable Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
    }

    public @Nullable Duration getLivenessTimeout() {
      return livenessTimeout;
    }

    public void setLivenessTimeout(@Nullable Duration livenessTimeout) {
      this.livenessTimeout = livenessTimeout;
    }

    public @Nullable Integer getMaxPendingCalls() {
      return maxPendingCalls;
    }

    public void setMaxPendingCalls(@Nullable Integer maxPendingCalls) {
      this.maxPendingCalls = maxPendingCalls;
    }

    public @Nullable Duration getReconnectBackoffInitial() {
      return reconnectBackoffInitial;
    }

    public void setReconnectBackoffInitial(@Nullable Duration reconnectBackoffInitial) {
      this.reconnectBackoffInitial = reconnectBackoffInitial;
    }

    public @Nullable Duration getReconnectBackoffMax() {
      return reconnectBackoffMax;
    }

    public void setReconnectBackoffMax(@Nullable Duration reconnectBackoffMax) {
      this.reconnectBackoffMax = reconnectBackoffMax;
    }

    public EndpointFilter getEndpointFilter() {
      return endpointFilter;
    }
  }

  /**
   * Which of the endpoints the target lists the client calls ({@code petrel.clients.<name>.endpoint-filter.*}):
   * those whose version, zone and attributes equal every one set here (none set: every endpoint), as
   * {@code RpcClientBuilder.endpointFilter}.
   */
  public static class EndpointFilter {
    /** Call only endpoints of this version (a registrar's version(...), static://h:7000;version=2.3.0). */
    private @Nullable String version;
    /** Call only endpoints in this zone (a registrar's zone(...), static://h:7000;zone=eu-west-1a). */
    private @Nullable String zone;
    /** Call only endpoints with each of these attributes (a registrar's metadata(name, value)), e.g. group=blue. */
    private final Map<String, String> attributes = new LinkedHashMap<>();

    public @Nullable String getVersion() {
      return version;
    }

    public void setVersion(@Nullable String version) {
      this.version = version;
    }

    public @Nullable String getZone() {
      return zone;
    }

    public void setZone(@Nullable String zone) {
      this.zone = zone;
    }

    public Map<String, String> getAttributes() {
      return attributes;
    }
  }

  /**
   * TLS of the server or of one client ({@code ...tls.*}). Off unless {@code enabled} or {@code bundle} is set;
   * files are PEM, as for {@link TlsConfig}.
   */
  public static class Tls {
    /**
     * Whether to use TLS (default: false, plaintext, unless a bundle is set; false beside a bundle fails the
     * start).
     */
    private @Nullable Boolean enabled;
    /**
     * The name of a Spring Boot SSL bundle ({@code spring.ssl.bundle.pem.<name>} or {@code .jks.<name>}) to take
     * the own certificate and key and the certificates to trust from, in place of the file properties; setting it
     * turns TLS on (empty: no bundle). Its updates (reload-on-update) are used by new connections.
     */
    private @Nullable String bundle;
    /** Own certificate chain (PEM): required on a server, for mutual TLS on a client. */
    private @Nullable Path certificateChain;
    /** Own private key (PEM, PKCS#8), with the certificate chain. */
    private @Nullable Path privateKey;
    /** Password of an encrypted private key. */
    private @Nullable String privateKeyPassword;
    /** CA certificates to trust (PEM); unset trusts the JDK's CAs. */
    private @Nullable Path trustCertificates;
    /** Server only: NONE, OPTIONAL or REQUIRE a client certificate. */
    private TlsConfig.ClientAuth clientAuth = TlsConfig.ClientAuth.NONE;
    /** Client only: skip the check that the server's certificate names the target's host. */
    private boolean insecureSkipHostnameVerification;
    /**
     * Client only: the name every server's certificate must carry, sent as SNI, in place of the host dialled (pods
     * reached by IP with a certificate for the service's name); unset: each endpoint's own host.
     */
    private @Nullable String serverName;
    /** How often to look for changed files and load them again (0 = never). */
    private @Nullable Duration reloadInterval;

    /** {@code enabled} as set: null when unset (TLS is then on if and only if a bundle is set). */
    public @Nullable Boolean getEnabled() {
      return enabled;
    }

    public void setEnabled(@Nullable Boolean enabled) {
      this.enabled = enabled;
    }

    public @Nullable String getBundle() {
      return bundle;
    }

    public void setBundle(@Nullable String bundle) {
      this.bundle = bundle;
    }

    public @Nullable Path getCertificateChain() {
      return certificateChain;
    }

    public void setCertificateChain(@Nullable Path certificateChain) {
      this.certificateChain = certificateChain;
    }

    public @Nullable Path getPrivateKey() {
      return privateKey;
    }

    public void setPrivateKey(@Nullable Path privateKey) {
      this.privateKey = privateKey;
    }

    public @Nullable String getPrivateKeyPassword() {
      return privateKeyPassword;
    }

    public void setPrivateKeyPassword(@Nullable String privateKeyPassword) {
      this.privateKeyPassword = privateKeyPassword;
    }

    public @Nullable Path getTrustCertificates() {
      return trustCertificates;
    }

    public void setTrustCertificates(@Nullable Path trustCertificates) {
      this.trustCertificates = trustCertificates;
    }

    public TlsConfig.ClientAuth getClientAuth() {
      return clientAuth;
    }

    public void setClientAuth(TlsConfig.ClientAuth clientAuth) {
      this.clientAuth = clientAuth;
    }

    public boolean isInsecureSkipHostnameVerification() {
      return insecureSkipHostnameVerification;
    }

    public void setInsecureSkipHostnameVerification(boolean insecureSkipHostnameVerification) {
      this.insecureSkipHostnameVerification = insecureSkipHostnameVerification;
    }

    public @Nullable String getServerName() {
      return serverName;
    }

    public void setServerName(@Nullable String serverName) {
      this.serverName = serverName;
    }

    public @Nullable Duration getReloadInterval() {
      return reloadInterval;
    }

    public void setReloadInterval(@Nullable Duration reloadInterval) {
      this.reloadInterval = reloadInterval;
    }
  }
}

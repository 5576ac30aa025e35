package io.petrel.spring.boot;

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
  private final Map<String, Client> clients = new LinkedHashMap<>();

  public Server getServer() {
    return server;
  }

  /** Clients by name: {@code petrel.clients.greeter.target=127.0.0.1:7000}. One shared client per name. */
  public Map<String, Client> getClients() {
    return clients;
  }

  /** Options the server and each client both have, under {@code petrel.server.*} and {@code petrel.clients.<name>.*}. */
  public abstract static class Shared {
    private @Nullable DataSize maxFrameSize;
    private @Nullable DataSize maxMetadataSize;
    private @Nullable Duration keepAliveTime;
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
    private @Nullable String name;
    private @Nullable Integer businessThreads;
    private @Nullable Integer businessQueueSize;
    /** Handlers run on the event loop that read the request (never block in them). */
    private boolean directExecutor;
    /** Java 21+: each handler on its own virtual thread, at most this many calls at once (unset: the pool). */
    private @Nullable Integer virtualThreads;
    private @Nullable Integer maxConcurrentCallsPerConnection;
    private @Nullable Integer maxConnections;
    private @Nullable Integer maxConnectionsPerAddress;
    private @Nullable Duration handshakeTimeout;
    private @Nullable Duration frameReceiveTimeout;
    private @Nullable Duration idleTimeout;
    private @Nullable Duration keepAliveTimeout;
    private @Nullable Duration maxConnectionAge;
    private @Nullable Duration unwritableTimeout;
    private @Nullable DataSize maxBufferedBytes;
    private @Nullable Duration shutdownGracePeriod;

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
  }

  /** {@code petrel.clients.<name>.*}: one shared client. */
  public static class Client extends Shared {
    /** Where to call: {@code host:port}, {@code static://h1:7000,h2:7000} or a resolver's {@code scheme://...}. */
    private @Nullable String target;
    private @Nullable String loadBalancer;
    private @Nullable Integer connectionsPerEndpoint;
    private @Nullable Duration defaultDeadline;
    private @Nullable Duration connectTimeout;
    private @Nullable Integer maxPendingCalls;
    private @Nullable Duration reconnectBackoffInitial;
    private @Nullable Duration reconnectBackoffMax;

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
  }

  /**
   * TLS of the server or of one client ({@code ...tls.*}). Off unless {@code enabled}; files are PEM, as for
   * {@link TlsConfig}.
   */
  public static class Tls {
    private boolean enabled;
    /** Own certificate chain (PEM): required on a server, for mutual TLS on a client. */
    private @Nullable Path certificateChain;
    /** Own private key (PEM, PKCS#8), with {@code certificateChain}. */
    private @Nullable Path privateKey;
    private @Nullable String privateKeyPassword;
    /** CA certificates to trust (PEM); unset trusts the JDK's CAs. */
    private @Nullable Path trustCertificates;
    /** Server only: NONE, OPTIONAL or REQUIRE a client certificate. */
    private TlsConfig.ClientAuth clientAuth = TlsConfig.ClientAuth.NONE;
    /** Client only: skip the check that the server's certificate names the target's host. */
    private boolean insecureSkipHostnameVerification;
    /** How often to look for changed files and load them again (0 = never). */
    private @Nullable Duration reloadInterval;

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
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

    public @Nullable Duration getReloadInterval() {
      return reloadInterval;
    }

    public void setReloadInterval(@Nullable Duration reloadInterval) {
      this.reloadInterval = reloadInterval;
    }
  }
}

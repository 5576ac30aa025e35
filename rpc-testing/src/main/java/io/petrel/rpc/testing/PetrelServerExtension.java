package io.petrel.rpc.testing;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcClientBuilder;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.RpcServerBuilder;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.spi.Transports;
import java.io.IOException;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionConfigurationException;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Serves Petrel services to a JUnit 5 test and hands it a client. Register it with {@code @RegisterExtension}:
 *
 * <pre>{@code
 * @RegisterExtension
 * final PetrelServerExtension petrel = PetrelServerExtension.of(GreeterRpc.bind(new GreeterService()));
 *
 * @Test
 * void greets() {
 *   Greeter greeter = petrel.stub(GreeterRpc::stub);
 *   ...
 * }
 * }</pre>
 *
 * <p>Before each test it starts a server with the services, in-process under a name of its own (no socket, no
 * transport dependency needed) unless {@link Builder#netty()} asks for Netty on 127.0.0.1 and a free port, and
 * a client for it; after each test it closes both (the client first; calls still running are failed, the
 * server stopped at once, and the test fails if either does not terminate within {@link Builder#closeTimeout}).
 * With {@link Lifecycle#PER_CLASS} on a {@code static} field, one server and client serve every test of the
 * class, from before {@code @BeforeAll} methods to after {@code @AfterAll} ones. docs/testing.md lists every
 * option with its default.
 */
public final class PetrelServerExtension
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

  /** How the server is reached. */
  public enum Transport {
    /** In this JVM, by name, without a socket (the default). */
    IN_PROCESS,
    /** Over TCP on 127.0.0.1, a free port; needs io.petrel:rpc-transport-netty on the test class path. */
    NETTY
  }

  /** When the server and client start and stop. */
  public enum Lifecycle {
    /** A fresh server and client for each test (the default). */
    PER_TEST,
    /** One server and client for all tests of the class; the field must be {@code static}. */
    PER_CLASS
  }

  private static final AtomicLong NAMES = new AtomicLong();

  private final List<ServiceDefinition> services;
  private final Transport transport;
  private final @Nullable String inProcessName;
  private final Lifecycle lifecycle;
  private final UnaryOperator<RpcServerBuilder> serverOptions;
  private final UnaryOperator<RpcClientBuilder> clientOptions;
  private final Duration closeTimeout;

  private boolean staticField;
  private int classDepth;
  private volatile @Nullable RpcServer server;
  private volatile @Nullable RpcClient client;
  private volatile @Nullable String runningName;
  private final List<RpcClient> extraClients = new ArrayList<>();

  private PetrelServerExtension(Builder b) {
    this.services = List.copyOf(b.services);
    this.transport = b.transport;
    this.inProcessName = b.inProcessName;
    this.lifecycle = b.lifecycle;
    this.serverOptions = b.serverOptions;
    this.clientOptions = b.clientOptions;
    this.closeTimeout = b.closeTimeout;
  }

  /** The services, served in-process, a fresh server and client for each test: every default. */
  public static PetrelServerExtension of(ServiceDefinition... services) {
    return builder().addServices(services).build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Configures a {@link PetrelServerExtension}; every option has a default (docs/testing.md). */
  public static final class Builder {
    private final List<ServiceDefinition> services = new ArrayList<>();
    private Transport transport = Transport.IN_PROCESS;
    private @Nullable String inProcessName;
    private Lifecycle lifecycle = Lifecycle.PER_TEST;
    private UnaryOperator<RpcServerBuilder> serverOptions = UnaryOperator.identity();
    private UnaryOperator<RpcClientBuilder> clientOptions = UnaryOperator.identity();
    private Duration closeTimeout = Duration.ofSeconds(20);

    private Builder() {}

    /** A service to serve (generated: {@code FooRpc.bind(impl)}). At least one is usual; none is allowed. */
    public Builder addService(ServiceDefinition service) {
      services.add(Objects.requireNonNull(service, "service"));
      return this;
    }

    public Builder addServices(ServiceDefinition... services) {
      for (ServiceDefinition s : services) {
        addService(s);
      }
      return this;
    }

    /** Serves in-process under a name made for each start ({@code petrel-test-<TestClass>-<n>}): the default. */
    public Builder inProcess() {
      this.transport = Transport.IN_PROCESS;
      this.inProcessName = null;
      return this;
    }

    /**
     * Serves in-process under this name, for code under test that builds its own client with
     * {@code RpcClient.builder().inProcess(name)}. Two servers of one name cannot run at once in a JVM, so tests
     * run in parallel must use different names.
     */
    public Builder inProcess(String name) {
      this.transport = Transport.IN_PROCESS;
      this.inProcessName = Objects.requireNonNull(name, "name");
      return this;
    }

    /**
     * Serves over the Netty transport on 127.0.0.1, on a free port: for tests of what only a socket shows.
     * Needs io.petrel:rpc-transport-netty on the test class path; without it the test fails saying so.
     */
    public Builder netty() {
      this.transport = Transport.NETTY;
      this.inProcessName = null;
      return this;
    }

    /** When the server and client start and stop (default {@link Lifecycle#PER_TEST}). */
    public Builder lifecycle(Lifecycle lifecycle) {
      this.lifecycle = Objects.requireNonNull(lifecycle, "lifecycle");
      return this;
    }

    /**
     * More server options, applied after the extension has set the address, the services and the name (for
     * example {@code b -> b.directExecutor().intercept(auth)}). Default: none.
     */
    public Builder server(UnaryOperator<RpcServerBuilder> options) {
      this.serverOptions = Objects.requireNonNull(options, "options");
      return this;
    }

    /**
     * More options for the clients the extension makes, applied after it has pointed them at the server (for
     * example {@code b -> b.defaultDeadline(Duration.ofSeconds(1))}). Default: none.
     */
    public Builder client(UnaryOperator<RpcClientBuilder> options) {
      this.clientOptions = Objects.requireNonNull(options, "options");
      return this;
    }

    /** How long closing waits for the client and the server to terminate before failing (default 20 s). */
    public Builder closeTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "closeTimeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("closeTimeout must be > 0: " + timeout);
      }
      this.closeTimeout = timeout;
      return this;
    }

    public PetrelServerExtension build() {
      return new PetrelServerExtension(this);
    }
  }

  // ---- what a test uses ----

  /** The client of the running server (made with the extension's client options). */
  public RpcClient client() {
    RpcClient c = client;
    if (c == null) {
      throw notRunning("client()");
    }
    return c;
  }

  /** A generated stub over {@link #client()}: {@code petrel.stub(GreeterRpc::stub)}. */
  public <S> S stub(Function<? super RpcClient, S> stubFactory) {
    return stubFactory.apply(client());
  }

  /** The running server. */
  public RpcServer server() {
    RpcServer s = server;
    if (s == null) {
      throw notRunning("server()");
    }
    return s;
  }

  /** Where the server is: an {@link io.petrel.rpc.InProcessAddress} or, with Netty, 127.0.0.1 and its port. */
  public SocketAddress address() {
    return server().address();
  }

  /** The transport this extension serves over. */
  public Transport transport() {
    return transport;
  }

  /**
   * Another client of the running server, with the extension's client options and then {@code options}; closed
   * with the server.
   */
  public RpcClient newClient(UnaryOperator<RpcClientBuilder> options) {
    RpcServer s = server();
    RpcClient c = options.apply(clientOptions.apply(pointedAt(s))).build();
    synchronized (extraClients) {
      extraClients.add(c);
    }
    return c;
  }

  /** A client builder pointed at the running server, with no other option: for code that builds its own. */
  public RpcClientBuilder clientBuilder() {
    return pointedAt(server());
  }

  private RpcClientBuilder pointedAt(RpcServer s) {
    return transport == Transport.NETTY ? RpcClient.builder().address("127.0.0.1", s.port())
        : RpcClient.builder().inProcess(Objects.requireNonNull(runningName, "the name of the running server"));
  }

  private IllegalStateException notRunning(String what) {
    return new IllegalStateException("PetrelServerExtension: no server is running now, so " + what + " has"
        + " nothing to give; call it inside a test or a @BeforeEach method"
        + (lifecycle == Lifecycle.PER_CLASS ? " (or @BeforeAll, with lifecycle PER_CLASS)" : ""));
  }

  // ---- JUnit callbacks ----

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    staticField = true; // JUnit calls class-level callbacks only for static fields
    if (lifecycle == Lifecycle.PER_CLASS && classDepth++ == 0) {
      start(context);
    }
  }

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    if (lifecycle == Lifecycle.PER_TEST) {
      start(context);
    } else if (!staticField) {
      throw new ExtensionConfigurationException("PetrelServerExtension with lifecycle PER_CLASS must be registered"
          + " on a static field (@RegisterExtension static final ...): JUnit tells an instance field nothing before"
          + " or after all tests");
    }
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    if (lifecycle == Lifecycle.PER_TEST) {
      stop();
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (lifecycle == Lifecycle.PER_CLASS && --classDepth == 0) {
      stop();
    }
  }

  private void start(ExtensionContext context) throws IOException {
    RpcServerBuilder b = RpcServer.builder();
    String name;
    if (transport == Transport.NETTY) {
      try {
        Transports.find("netty");
      } catch (IllegalStateException e) {
        throw new ExtensionConfigurationException("PetrelServerExtension.builder().netty() needs the Netty"
            + " transport on the test class path: add the dependency io.petrel:rpc-transport-netty (scope test),"
            + " or serve in-process (the default). " + e.getMessage(), e);
      }
      name = "petrel-test-" + context.getRequiredTestClass().getSimpleName();
      b.bindAddress("127.0.0.1", 0);
    } else {
      name = inProcessName != null ? inProcessName
          : "petrel-test-" + context.getRequiredTestClass().getSimpleName() + "-" + NAMES.incrementAndGet();
      b.inProcess(name);
    }
    b.name(name);
    services.forEach(b::addService);
    RpcServer s = serverOptions.apply(b).build().start();
    runningName = name;
    server = s;
    try {
      client = clientOptions.apply(pointedAt(s)).build();
    } catch (RuntimeException e) {
      server = null;
      s.shutdownNow();
      throw e;
    }
  }

  private void stop() throws InterruptedException {
    RpcServer s = server;
    RpcClient c = client;
    List<RpcClient> clients = new ArrayList<>();
    synchronized (extraClients) {
      clients.addAll(extraClients);
      extraClients.clear();
    }
    if (c != null) {
      clients.add(c);
    }
    client = null;
    server = null;
    List<String> problems = new ArrayList<>();
    long timeoutNanos = closeTimeout.toNanos();
    for (RpcClient each : clients) {
      each.shutdownNow();
    }
    for (RpcClient each : clients) {
      if (!each.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS)) {
        problems.add("client " + each + " did not terminate within " + closeTimeout.toMillis() + " ms");
      }
    }
    if (s != null) {
      s.shutdownNow();
      if (!s.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS)) {
        problems.add("server " + s + " did not terminate within " + closeTimeout.toMillis() + " ms");
      }
    }
    if (!problems.isEmpty()) {
      throw new AssertionError("PetrelServerExtension: " + String.join("; ", problems));
    }
  }
}

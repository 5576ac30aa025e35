package io.petrel.rpc.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import com.google.protobuf.StringValue;
import io.petrel.rpc.CallOptions;
import io.petrel.rpc.InProcessAddress;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.stub.AbstractStub;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/**
 * The extension as JUnit drives it: each fixture class below (nested, so the build does not run it on its own)
 * is run through the JUnit launcher, and the test checks what the fixture recorded and how its tests ended.
 */
class PetrelServerExtensionTest {

  private static TestExecutionSummary run(Class<?> fixture) {
    LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
        .selectors(selectClass(fixture))
        // The leak check of this class must not be reset by the fixture's run.
        .configurationParameter("junit.jupiter.extensions.autodetection.enabled", "false")
        .build();
    SummaryGeneratingListener listener = new SummaryGeneratingListener();
    LauncherFactory.create().execute(request, listener);
    return listener.getSummary();
  }

  private static String failures(TestExecutionSummary summary) {
    StringBuilder sb = new StringBuilder();
    summary.getFailures().forEach(f -> sb.append(f.getTestIdentifier().getDisplayName()).append(": ")
        .append(f.getException()).append('\n'));
    return sb.toString();
  }

  /** A hand-written stub, as generated ones are made: a constructor or factory taking the client. */
  static final class EchoStub extends AbstractStub<EchoStub> {
    EchoStub(RpcClient client) {
      this(client, CallOptions.DEFAULT);
    }

    private EchoStub(RpcClient client, CallOptions options) {
      super(client, options);
    }

    @Override
    protected EchoStub build(RpcClient client, CallOptions options) {
      return new EchoStub(client, options);
    }

    String echo(String s) {
      return client.unaryCall(ConformanceService.ECHO, StringValue.of(s), options).getValue();
    }
  }

  // ---- per test ----

  static final class PerTestFixture {
    static final List<RpcServer> servers = new CopyOnWriteArrayList<>();
    static final List<RpcClient> clients = new CopyOnWriteArrayList<>();

    @RegisterExtension
    final PetrelServerExtension petrel = PetrelServerExtension.of(new ConformanceService().definition());

    @Test
    void one() {
      record();
    }

    @Test
    void two() {
      record();
    }

    private void record() {
      servers.add(petrel.server());
      clients.add(petrel.client());
      assertThat(petrel.transport()).isEqualTo(PetrelServerExtension.Transport.IN_PROCESS);
      assertThat(petrel.address()).isInstanceOf(InProcessAddress.class);
      assertThat(petrel.stub(EchoStub::new).echo("via stub")).isEqualTo("via stub");
      assertThat(petrel.newClient(b -> b.name("second")).unaryCall(ConformanceService.ADD, new Object[] {1, 2}))
          .isEqualTo(3);
    }
  }

  @Test
  void byDefaultEachTestGetsAFreshInProcessServerAndClientClosedAfterIt() {
    TestExecutionSummary summary = run(PerTestFixture.class);
    assertThat(summary.getTestsSucceededCount()).as(failures(summary)).isEqualTo(2);
    assertThat(PerTestFixture.servers).hasSize(2).doesNotHaveDuplicates()
        .allSatisfy(s -> assertThat(s.isTerminated()).as("%s terminated", s).isTrue());
    assertThat(PerTestFixture.servers.get(0).address()).isNotEqualTo(PerTestFixture.servers.get(1).address());
    assertThat(((InProcessAddress) PerTestFixture.servers.get(0).address()).name())
        .startsWith("petrel-test-PerTestFixture-");
    assertThat(PerTestFixture.clients).hasSize(2).allSatisfy(c -> assertThat(c.isTerminated()).isTrue());
  }

  // ---- per class ----

  static final class PerClassFixture {
    static final List<RpcServer> servers = new CopyOnWriteArrayList<>();

    @RegisterExtension
    static final PetrelServerExtension petrel = PetrelServerExtension.builder()
        .addService(new ConformanceService().definition())
        .inProcess("per-class-fixture")
        .lifecycle(PetrelServerExtension.Lifecycle.PER_CLASS)
        .server(b -> b.maxConcurrentCallsPerConnection(7))
        .client(b -> b.defaultDeadline(Duration.ofSeconds(5)).name("fixture-client"))
        .closeTimeout(Duration.ofSeconds(5))
        .build();

    @BeforeAll
    static void before() {
      servers.add(petrel.server());
    }

    @Test
    void one() {
      servers.add(petrel.server());
      assertThat(petrel.client().unaryCall(ConformanceService.ECHO, StringValue.of("1")).getValue()).isEqualTo("1");
    }

    @Test
    void two() {
      servers.add(petrel.server());
      try (RpcClient own = petrel.clientBuilder().build().start()) {
        assertThat(own.unaryCall(ConformanceService.ECHO, StringValue.of("own")).getValue()).isEqualTo("own");
      }
      assertThat(petrel.address()).isEqualTo(new InProcessAddress("per-class-fixture"));
    }
  }

  @Test
  void perClassOneServerServesEveryTestOfTheClassFromBeforeAllToAfterAll() {
    TestExecutionSummary summary = run(PerClassFixture.class);
    assertThat(summary.getTestsSucceededCount()).as(failures(summary)).isEqualTo(2);
    assertThat(PerClassFixture.servers).hasSize(3);
    assertThat(PerClassFixture.servers.stream().distinct()).hasSize(1);
    assertThat(PerClassFixture.servers.get(0).isTerminated()).isTrue();
  }

  static final class PerClassOnInstanceFieldFixture {
    @RegisterExtension
    final PetrelServerExtension petrel = PetrelServerExtension.builder()
        .lifecycle(PetrelServerExtension.Lifecycle.PER_CLASS).build();

    @Test
    void test() {
      petrel.client();
    }
  }

  @Test
  void perClassOnAnInstanceFieldFailsSayingTheFieldMustBeStatic() {
    TestExecutionSummary summary = run(PerClassOnInstanceFieldFixture.class);
    assertThat(summary.getTestsFailedCount()).isEqualTo(1);
    assertThat(summary.getFailures().get(0).getException())
        .hasMessageContaining("lifecycle PER_CLASS must be registered on a static field");
  }

  // ---- netty without Netty ----

  static final class NettyFixture {
    @RegisterExtension
    final PetrelServerExtension petrel = PetrelServerExtension.builder()
        .addService(new ConformanceService().definition()).netty().build();

    @Test
    void test() {
      petrel.client();
    }
  }

  @Test
  void nettyWithoutTheNettyTransportOnTheClassPathFailsSayingWhatToAdd() {
    TestExecutionSummary summary = run(NettyFixture.class);
    assertThat(summary.getTestsFailedCount()).isEqualTo(1);
    assertThat(summary.getFailures().get(0).getException())
        .hasMessageContaining("needs the Netty transport on the test class path")
        .hasMessageContaining("io.petrel:rpc-transport-netty");
  }

  @Test
  void theClientAndServerAreOnlyThereWhileTheServerRuns() {
    PetrelServerExtension idle = PetrelServerExtension.of();
    assertThatThrownBy(idle::client).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no server is running now, so client() has nothing to give");
    assertThatThrownBy(idle::server).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> PetrelServerExtension.builder().closeTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("closeTimeout must be > 0");
  }
}

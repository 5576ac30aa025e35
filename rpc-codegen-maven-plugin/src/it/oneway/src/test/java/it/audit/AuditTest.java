package it.audit;

import static org.assertj.core.api.Assertions.assertThat;

import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AuditTest {
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final BlockingQueue<String> received = new LinkedBlockingQueue<>();
  private final CountDownLatch exploded = new CountDownLatch(1);
  private RpcServer server;
  private RpcClient client;

  private final class AuditImpl implements Audit {
    @Override
    public void record(String event) {
      events.add(event);
      received.add(event);
    }

    @Override
    public void explode(String why) {
      exploded.countDown();
      throw new IllegalStateException(why);
    }

    @Override
    public List<String> events() {
      return List.copyOf(events);
    }
  }

  @BeforeEach
  void start() throws Exception {
    server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(AuditRpc.bind(new AuditImpl())).build()
        .start();
    client = RpcClient.builder().address("127.0.0.1", server.port()).build();
  }

  @AfterEach
  void stop() {
    client.close();
    server.close();
  }

  @Test
  void onewayCallsReachTheServerWithoutAResponse() throws Exception {
    Audit audit = AuditRpc.stub(client);
    audit.record("login");
    audit.record("view");
    // The async stub's future completes once the request is written, not when the server ran it.
    AuditRpc.asyncStub(client).record("logout").get(10, TimeUnit.SECONDS);

    for (int i = 0; i < 3; i++) {
      assertThat(received.poll(10, TimeUnit.SECONDS)).isNotNull();
    }
    assertThat(audit.events()).containsExactlyInAnyOrder("login", "view", "logout");
  }

  @Test
  void aFailingOnewayMethodReachesNoCallerAndTheConnectionKeepsServing() throws Exception {
    Audit audit = AuditRpc.stub(client);
    audit.explode("boom");
    assertThat(exploded.await(10, TimeUnit.SECONDS)).isTrue();
    audit.record("after");
    assertThat(received.poll(10, TimeUnit.SECONDS)).isEqualTo("after");
    assertThat(audit.events()).containsExactly("after");
    assertThat(client.pendingCalls()).isZero();
  }
}

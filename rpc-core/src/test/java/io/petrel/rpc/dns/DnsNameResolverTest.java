package io.petrel.rpc.dns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.Endpoint;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.Status;
import io.petrel.rpc.NameResolver;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class DnsNameResolverTest {

  /** Keeps what a resolver says, in order. */
  private static final class Heard implements NameResolver.Listener {
    final LinkedBlockingQueue<Object> said = new LinkedBlockingQueue<>();

    @Override
    public void onEndpoints(List<Endpoint> endpoints) {
      said.add(endpoints);
    }

    @Override
    public void onError(Status error) {
      said.add(error);
    }

    Object next() throws InterruptedException {
      Object o = said.poll(5, TimeUnit.SECONDS);
      assertThat(o).as("the resolver said something within 5 s").isNotNull();
      return o;
    }
  }

  private static InetAddress[] addresses(String... literals) throws UnknownHostException {
    InetAddress[] out = new InetAddress[literals.length];
    for (int i = 0; i < literals.length; i++) {
      out[i] = InetAddress.getByName(literals[i]); // literals: no lookup
    }
    return out;
  }

  @Test
  void localhostResolvesToItsLoopbackAddressesOnThePort() throws Exception {
    NameResolver r = new DnsNameResolverProvider().newResolver("/localhost:7000");
    Heard heard = new Heard();
    try {
      r.start(heard);
      // start() looked the name up on this thread: the list is there already.
      assertThat(heard.said).hasSize(1);
      @SuppressWarnings("unchecked")
      List<Endpoint> list = (List<Endpoint>) heard.next();
      List<String> expected = new java.util.ArrayList<>();
      for (InetAddress a : InetAddress.getAllByName("localhost")) {
        expected.add(a.getHostAddress());
      }
      assertThat(list).extracting(Endpoint::host).containsExactlyInAnyOrderElementsOf(expected.stream().distinct()
          .toList());
      assertThat(list).extracting(Endpoint::host).containsAnyOf("127.0.0.1", "0:0:0:0:0:0:0:1");
      assertThat(list).extracting(Endpoint::port).containsOnly(7000);
    } finally {
      r.shutdown();
    }
  }

  @Test
  void aChangedAnswerReachesTheClientOnTheNextPeriodAndAnUnchangedOneDoesNot() throws Exception {
    AtomicReference<InetAddress[]> answer = new AtomicReference<>(addresses("10.0.0.1", "10.0.0.2"));
    AtomicInteger lookups = new AtomicInteger();
    CompletableFuture<Void> thirdLookup = new CompletableFuture<>();
    DnsNameResolver r = DnsNameResolver.builder("greeter.default.svc.cluster.local", 7000)
        .refreshInterval(Duration.ofMillis(20)).lookup(host -> {
          assertThat(host).isEqualTo("greeter.default.svc.cluster.local");
          if (lookups.incrementAndGet() == 3) {
            thirdLookup.complete(null);
          }
          return answer.get();
        }).build();
    Heard heard = new Heard();
    try {
      r.start(heard);
      assertThat(heard.next()).isEqualTo(List.of(Endpoint.of("10.0.0.1", 7000), Endpoint.of("10.0.0.2", 7000)));
      thirdLookup.get(5, TimeUnit.SECONDS);
      assertThat(heard.said).as("the same answer again is not told").isEmpty();

      answer.set(addresses("10.0.0.2", "10.0.0.3", "fd00::7"));
      assertThat(heard.next()).isEqualTo(List.of(Endpoint.of("10.0.0.2", 7000), Endpoint.of("10.0.0.3", 7000),
          Endpoint.of("fd00:0:0:0:0:0:0:7", 7000)));
    } finally {
      r.shutdown();
    }
  }

  @Test
  void aFailedLookupIsAnErrorThatKeepsTheLastAddresses() throws Exception {
    AtomicReference<InetAddress[]> answer = new AtomicReference<>(addresses("10.0.0.1"));
    DnsNameResolver r = DnsNameResolver.builder("greeter", 7000).refreshInterval(Duration.ofMillis(20))
        .lookup(host -> {
          InetAddress[] a = answer.get();
          if (a == null) {
            throw new UnknownHostException(host + ": Name or service not known");
          }
          return a;
        }).build();
    Heard heard = new Heard();
    try {
      r.start(heard);
      assertThat(heard.next()).isEqualTo(List.of(Endpoint.of("10.0.0.1", 7000)));
      answer.set(null);
      Status error = (Status) heard.next();
      assertThat(error.code()).isEqualTo(Status.Code.UNAVAILABLE);
      assertThat(error.description()).contains("cannot resolve greeter", "Name or service not known",
          "keeping its last 1 address(es)");
    } finally {
      r.shutdown();
    }
  }

  @Test
  void refreshLooksTheNameUpAgainLongBeforeThePeriod() throws Exception {
    LinkedBlockingQueue<Long> lookedUp = new LinkedBlockingQueue<>();
    DnsNameResolver r = DnsNameResolver.builder("greeter", 7000).refreshInterval(Duration.ofHours(1))
        .minRefreshInterval(Duration.ofMillis(10)).lookup(host -> {
          lookedUp.add(System.nanoTime());
          return addresses("10.0.0.1");
        }).build();
    try {
      r.start(new Heard());
      assertThat(lookedUp.take()).isNotNull();
      r.refresh(); // what the client does when it loses a connection
      assertThat(lookedUp.poll(5, TimeUnit.SECONDS)).as("a lookup within 5 s, not the hour of the period")
          .isNotNull();
    } finally {
      r.shutdown();
    }
  }

  @Test
  void refreshesCloserThanMinRefreshIntervalMakeOneLookup() throws Exception {
    List<Long> times = new CopyOnWriteArrayList<>();
    LinkedBlockingQueue<Long> lookedUp = new LinkedBlockingQueue<>();
    DnsNameResolver r = DnsNameResolver.builder("greeter", 7000).refreshInterval(Duration.ofHours(1))
        .minRefreshInterval(Duration.ofMillis(300)).lookup(host -> {
          long t = System.nanoTime();
          times.add(t);
          lookedUp.add(t);
          return addresses("10.0.0.1");
        }).build();
    try {
      r.start(new Heard());
      assertThat(lookedUp.take()).isNotNull();
      for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 20; i++) {
          r.refresh(); // a storm of lost connections
        }
        assertThat(lookedUp.poll(5, TimeUnit.SECONDS)).isNotNull();
      }
    } finally {
      r.shutdown();
    }
    assertThat(times).hasSize(3);
    for (int i = 1; i < times.size(); i++) {
      assertThat(TimeUnit.NANOSECONDS.toMillis(times.get(i) - times.get(i - 1))).isGreaterThanOrEqualTo(290);
    }
  }

  @Test
  void badDnsTargetsSayWhatIsExpected() {
    assertThatThrownBy(() -> RpcClient.builder().target("dns://8.8.8.8/greeter:7000"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names a DNS server ('8.8.8.8')")
        .hasMessageContaining("dns:///host:port");
    assertThatThrownBy(() -> RpcClient.builder().target("dns:///greeter"))
        .hasMessageContaining("expected dns:///host:port");
    assertThatThrownBy(() -> RpcClient.builder().target("dns:///greeter:http"))
        .hasMessageContaining("bad port 'http'");
    assertThatThrownBy(() -> RpcClient.builder().target("dns:///greeter:7000?refresh=often"))
        .hasMessageContaining("bad refresh 'often'").hasMessageContaining("like 500ms, 10s or 2m");
    assertThatThrownBy(() -> RpcClient.builder().target("dns:///greeter:7000?refresh=1ms"))
        .hasMessageContaining("refreshInterval must be at least 10 ms");
    assertThatThrownBy(() -> RpcClient.builder().target("dns:///greeter:7000?ttl=5s"))
        .hasMessageContaining("unknown option 'ttl'");
  }
}

package it.quotes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.petrel.rpc.ExceptionDetails;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.RpcServer;
import io.petrel.rpc.ServiceDefinition;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class QuotesTest {
  private RpcServer server;
  private RpcClient client;

  /** A blocking-style implementation whose quote() returns a future completed by a later publish(). */
  static final class Board implements Quotes {
    final Map<String, CompletableFuture<Double>> prices = new ConcurrentHashMap<>();
    final CountDownLatch waiting = new CountDownLatch(1);

    private CompletableFuture<Double> price(String symbol) {
      return prices.computeIfAbsent(symbol, s -> new CompletableFuture<>());
    }

    @Override
    public CompletableFuture<Double> quote(String symbol) {
      if (symbol.isEmpty()) {
        return CompletableFuture.failedFuture(new IllegalArgumentException("empty symbol"));
      }
      CompletableFuture<Double> f = price(symbol);
      waiting.countDown();
      return f;
    }

    @Override
    public CompletableFuture<Void> publish(String symbol, double price) {
      price(symbol).complete(price);
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public int symbols() {
      return prices.size();
    }
  }

  /** A non-blocking implementation of the generated async view. */
  static class AsyncBoard implements QuotesAsync {
    final Board board = new Board();

    @Override
    public CompletableFuture<Double> quote(String symbol) {
      return board.quote(symbol);
    }

    @Override
    public CompletableFuture<Void> publish(String symbol, double price) {
      return CompletableFuture.runAsync(() -> board.publish(symbol, price));
    }

    @Override
    public CompletableFuture<Integer> symbols() {
      return CompletableFuture.supplyAsync(board::symbols);
    }
  }

  private void start(ServiceDefinition service) throws Exception {
    server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(service).build().start();
    client = RpcClient.builder().address("127.0.0.1", server.port()).build();
  }

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void futureMethodsOfTheInterfaceAreServedWithoutHoldingAThread() throws Exception {
    Board board = new Board();
    start(QuotesRpc.bind(board));
    QuotesAsync quotes = QuotesRpc.asyncStub(client);

    CompletableFuture<Double> pending = quotes.quote("ACME");
    assertThat(board.waiting.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(pending).isNotDone();
    // The blocking stub works alongside: the pending quote holds no server thread.
    Quotes blocking = QuotesRpc.stub(client);
    assertThat(blocking.symbols()).isEqualTo(1);
    blocking.publish("ACME", 12.5).get(10, TimeUnit.SECONDS);
    assertThat(pending.get(10, TimeUnit.SECONDS)).isEqualTo(12.5);
  }

  @Test
  void anImplementationOfTheAsyncViewServesEveryMethod() throws Exception {
    AsyncBoard board = new AsyncBoard();
    start(QuotesRpc.bindAsync(board));
    Quotes quotes = QuotesRpc.stub(client);

    CompletableFuture<Double> pending = quotes.quote("XYZ");
    assertThat(board.board.waiting.await(10, TimeUnit.SECONDS)).isTrue();
    QuotesRpc.asyncStub(client).publish("XYZ", 3.0).get(10, TimeUnit.SECONDS);
    assertThat(pending.get(10, TimeUnit.SECONDS)).isEqualTo(3.0);
    assertThat(quotes.symbols()).isEqualTo(1);
  }

  @Test
  void anAsyncImplementationCompletingAPrimitiveMethodWithNullFailsTheCallWithInternal() throws Exception {
    // symbols() returns int in the interface: a null completion has no value to send, and must not read as 0.
    start(QuotesRpc.bindAsync(new AsyncBoard() {
      @Override
      public CompletableFuture<Integer> symbols() {
        return CompletableFuture.supplyAsync(() -> null);
      }
    }));
    assertThatThrownBy(() -> QuotesRpc.stub(client).symbols())
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.INTERNAL);
          assertThat(e.status().description()).isEqualTo("it.Quotes/symbols completed its future with null;"
              + " its response type int cannot be null (complete it with a value, or return Integer in the"
              + " interface if null is meant to be a value)");
        });
  }

  /**
   * quote does not declare the IllegalArgumentException its future fails with: by default the caller gets UNKNOWN
   * without its class or message; a server built with exceptionDetails(ALL) names both.
   */
  @Test
  void aFailedFutureReachesTheCallerAsAStatusNamingTheExceptionOnlyWithAllDetails() throws Exception {
    start(QuotesRpc.bind(new Board()));
    assertThatThrownBy(() -> QuotesRpc.asyncStub(client).quote("").get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.UNKNOWN);
          assertThat(e.status().description()).isEqualTo("it.Quotes/quote failed on the server: its handler threw"
              + " an exception the method does not declare (the server logs it; declare it on the method, map it"
              + " with RpcServer.builder().exceptionMapper, or let the server send it with exceptionDetails(ALL))");
        });
    stop();
    server = RpcServer.builder().bindAddress("127.0.0.1", 0).addService(QuotesRpc.bind(new Board()))
        .exceptionDetails(ExceptionDetails.ALL).build().start();
    client = RpcClient.builder().address("127.0.0.1", server.port()).build();
    assertThatThrownBy(() -> QuotesRpc.asyncStub(client).quote("").get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOfSatisfying(StatusException.class, e -> {
          assertThat(e.code()).isEqualTo(Status.Code.UNKNOWN);
          assertThat(e.status().description()).isEqualTo("java.lang.IllegalArgumentException: empty symbol");
        });
  }
}

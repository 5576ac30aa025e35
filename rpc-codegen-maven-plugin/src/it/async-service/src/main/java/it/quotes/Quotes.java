package it.quotes;

import io.petrel.rpc.RpcService;
import java.util.concurrent.CompletableFuture;

@RpcService("it.Quotes")
public interface Quotes {
  /** Completes when a price for the symbol is published. */
  CompletableFuture<Double> quote(String symbol);

  CompletableFuture<Void> publish(String symbol, double price);

  /** A blocking method next to the asynchronous ones. */
  int symbols();
}

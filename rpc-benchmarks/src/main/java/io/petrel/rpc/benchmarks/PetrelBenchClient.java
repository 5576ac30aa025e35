package io.petrel.rpc.benchmarks;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.IoMode;
import io.petrel.rpc.RpcClient;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;
import java.util.concurrent.CompletableFuture;

/** Petrel through its generic client API with hand-written descriptors (what generated stubs call). */
final class PetrelBenchClient implements BenchClient {
  private final RpcClient client;
  private final Payload payload;
  private final BenchmarkMessage message = Messages.request();
  private final byte[] body;

  PetrelBenchClient(String host, int port, Payload payload, int connections, IoMode io) {
    this.payload = payload;
    this.body = payload.body();
    this.client = RpcClient.builder()
        .address(host, port)
        .connectionsPerEndpoint(connections)
        .ioMode(io)
        .name("bench-petrel-client")
        .build()
        .start();
  }

  @Override
  public Object call() {
    if (payload == Payload.MESSAGE) {
      return client.unaryCall(Messages.ECHO, message, CallOptions.DEFAULT);
    }
    return client.unaryCall(Messages.ECHO_BYTES, body, CallOptions.DEFAULT);
  }

  @Override
  public CompletableFuture<?> callAsync() {
    if (payload == Payload.MESSAGE) {
      return client.unaryCallAsync(Messages.ECHO, message, CallOptions.DEFAULT);
    }
    return client.unaryCallAsync(Messages.ECHO_BYTES, body, CallOptions.DEFAULT);
  }

  @Override
  public void verify(Object reply) {
    BenchClient.verifyReply(payload, body.length, reply);
  }

  @Override
  public void close() {
    client.close();
  }
}

package io.petrel.rpc.benchmarks;

import io.petrel.rpc.RpcService;
import io.petrel.rpc.benchmarks.proto.BenchmarkMessage;

/**
 * The benchmark service as a user would declare it: the codegen plugin writes {@code EchoServiceRpc} from
 * it, whose stub {@link StubOverheadBenchmark} sets beside the generic call API.
 */
@RpcService("bench.EchoService")
public interface EchoService {
  BenchmarkMessage echo(BenchmarkMessage request);
}

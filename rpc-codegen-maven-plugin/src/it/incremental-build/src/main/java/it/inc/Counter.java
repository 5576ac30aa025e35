package it.inc;

import io.petrel.rpc.RpcService;

@RpcService("it.Counter")
public interface Counter {
  long increment(long by);
}

package it.clock;

import io.petrel.rpc.RpcService;

/** Declared in test sources only. */
@RpcService("it.Clock")
public interface Clock {
  String now(Zone zone);
}

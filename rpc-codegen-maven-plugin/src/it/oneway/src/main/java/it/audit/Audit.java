package it.audit;

import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;
import java.util.List;

@RpcService("it.Audit")
public interface Audit {
  @RpcMethod(oneway = true)
  void record(String event);

  @RpcMethod(oneway = true)
  void explode(String why);

  List<String> events();
}

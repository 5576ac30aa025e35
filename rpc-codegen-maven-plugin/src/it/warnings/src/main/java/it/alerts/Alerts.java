package it.alerts;

import io.petrel.rpc.RpcMethod;
import io.petrel.rpc.RpcService;
import java.io.IOException;

@RpcService("it.Alerts")
public interface Alerts {
  @RpcMethod(oneway = true)
  void raise(String alert) throws IOException;

  String status(String alert);

  @RpcMethod(idempotent = true)
  default String statusOrNone(String alert) {
    return alert == null ? "none" : status(alert);
  }

  @RpcMethod(oneway = true)
  static String normalize(String alert) {
    return alert.trim();
  }
}

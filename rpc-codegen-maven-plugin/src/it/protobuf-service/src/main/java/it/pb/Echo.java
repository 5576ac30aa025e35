package it.pb;

import com.google.protobuf.Int64Value;
import com.google.protobuf.StringValue;
import io.petrel.rpc.RpcService;

@RpcService("it.Echo")
public interface Echo {
  StringValue echo(StringValue request);

  Int64Value length(StringValue text);

  StringValue fail(StringValue reason) throws EchoException;

  /** Answers with the "caller" metadata of the request. */
  StringValue whoAmI(StringValue ignored);

  /** Answers once the server is told to, to test deadlines. */
  StringValue slow(StringValue request);
}

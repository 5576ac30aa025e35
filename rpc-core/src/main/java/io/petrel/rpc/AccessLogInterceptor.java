package io.petrel.rpc;

import java.util.Locale;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs one line per call at INFO on the logger {@code io.petrel.rpc.access}: method, status, latency from
 * the moment the server read the request, request and response body sizes, peer. Switch it on with
 * {@code RpcServer.builder().intercept(new AccessLogInterceptor())}; route or silence it through the logging
 * configuration of that logger. Example line:
 *
 * <pre>demo.Greeter/sayHello OK 0.412 ms req=581B resp=527B peer=/127.0.0.1:53422</pre>
 */
public final class AccessLogInterceptor implements ServerInterceptor {
  private final Logger log;

  public AccessLogInterceptor() {
    this(LoggerFactory.getLogger("io.petrel.rpc.access"));
  }

  public AccessLogInterceptor(Logger log) {
    this.log = log;
  }

  @Override
  public <Req, Resp> CompletionStage<Resp> intercept(Chain<Req, Resp> chain) throws Exception {
    ServerContext ctx = chain.context();
    CompletionStage<Resp> stage;
    try {
      stage = chain.proceed();
    } catch (Exception e) {
      log(chain, ctx, null, e);
      throw e;
    }
    return stage.whenComplete((resp, error) -> log(chain, ctx, resp, error));
  }

  private <Req, Resp> void log(Chain<Req, Resp> chain, ServerContext ctx, @Nullable Resp resp,
      @Nullable Throwable error) {
    if (!log.isInfoEnabled()) {
      return;
    }
    MethodDescriptor<Req, Resp> m = chain.method();
    String status = error == null ? "OK" : Status.fromThrowable(error).code().name();
    Status.Code gaveUp = error == null && m.type() != MethodType.ONEWAY ? ctx.cancellationCode() : null;
    if (gaveUp != null) {
      status = gaveUp.name(); // answered after the caller gave up: nobody received it (as rpc.server.calls counts it)
    }
    String respSize = "-";
    Marshaller<Resp> responseMarshaller = m.responseMarshaller();
    if (error == null && responseMarshaller != null && resp != null) {
      try {
        respSize = responseMarshaller.serializedSize(resp) + "B";
      } catch (RuntimeException e) {
        respSize = "?";
      }
    }
    double ms = (System.nanoTime() - ctx.startNanos()) / 1e6;
    log.info("{} {} {} ms req={}B resp={} peer={}", m.fullName(), status, String.format(Locale.ROOT, "%.3f", ms),
        ctx.requestSize(), respSize, ctx.peer());
  }
}

package io.petrel.rpc.internal;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import io.petrel.rpc.StatusException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/** Runs a client call through its interceptors, checking their rules, then hands it to the transport. */
public final class ClientChain<Req, Resp> implements ClientInterceptor.Chain<Req, Resp> {
  private static final VarHandle PROCEEDED;

  static {
    try {
      PROCEEDED = MethodHandles.lookup().findVarHandle(ClientChain.class, "proceeded", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The transport end of the chain. */
  public interface Terminal {
    <Req, Resp> CompletableFuture<Resp> send(MethodDescriptor<Req, Resp> method, Req request, CallOptions options,
        Consumer<Metadata> responseMetadata);

    /** Whether calls go over TLS; see {@link ClientInterceptor.Chain#isSecure()}. */
    default boolean isSecure() {
      return false;
    }
  }

  /** What all links of one call share. */
  private static final class Shared {
    final Terminal client;
    final List<ClientInterceptor> interceptors;
    volatile Metadata responseMetadata = Metadata.EMPTY;

    Shared(Terminal client, List<ClientInterceptor> interceptors) {
      this.client = client;
      this.interceptors = interceptors;
    }
  }

  private final Shared shared;
  private final int index;
  private final MethodDescriptor<Req, Resp> method;
  private final Req request;
  private final CallOptions options;
  @SuppressWarnings("unused") // accessed through PROCEEDED
  private volatile boolean proceeded;

  private ClientChain(Shared shared, int index, MethodDescriptor<Req, Resp> method, Req request,
      CallOptions options) {
    this.shared = shared;
    this.index = index;
    this.method = method;
    this.request = request;
    this.options = options;
  }

  public static <Req, Resp> CompletableFuture<Resp> start(Terminal client, List<ClientInterceptor> own,
      List<ClientInterceptor> perCall, MethodDescriptor<Req, Resp> method, Req request, CallOptions options) {
    List<ClientInterceptor> all;
    if (perCall.isEmpty()) {
      all = own;
    } else if (own.isEmpty()) {
      all = perCall;
    } else {
      all = new ArrayList<>(own.size() + perCall.size());
      all.addAll(own);
      all.addAll(perCall);
    }
    return new ClientChain<>(new Shared(client, all), 0, method, request, options).run();
  }

  private CompletableFuture<Resp> run() {
    ClientInterceptor interceptor = shared.interceptors.get(index);
    CompletableFuture<Resp> result;
    try {
      result = interceptor.intercept(this);
    } catch (StatusException e) {
      return CompletableFuture.failedFuture(e);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(Status.INTERNAL.withDescription("client interceptor "
          + interceptor.getClass().getName() + " threw " + Status.describe(e)).withCause(e).asException());
    }
    if (result == null) {
      return CompletableFuture.failedFuture(Status.INTERNAL.withDescription("client interceptor "
          + interceptor.getClass().getName() + " returned null; it must return a future").asException());
    }
    return result;
  }

  @Override
  public MethodDescriptor<Req, Resp> method() {
    return method;
  }

  @Override
  public Req request() {
    return request;
  }

  @Override
  public CallOptions options() {
    return options;
  }

  @Override
  public Metadata responseMetadata() {
    return shared.responseMetadata;
  }

  @Override
  public boolean isSecure() {
    return shared.client.isSecure();
  }

  @Override
  public CompletableFuture<Resp> proceed(Req request, CallOptions options) {
    if (!PROCEEDED.compareAndSet(this, false, true)) {
      throw Status.INTERNAL.withDescription("client interceptor "
          + shared.interceptors.get(index).getClass().getName() + " called proceed() twice for "
          + method.fullName() + "; call it at most once").asException();
    }
    if (index + 1 < shared.interceptors.size()) {
      return new ClientChain<>(shared, index + 1, method, request, options).run();
    }
    Consumer<Metadata> listener = options.responseMetadataListener();
    Consumer<Metadata> sink = md -> {
      shared.responseMetadata = md;
      if (listener != null) {
        listener.accept(md);
      }
    };
    return shared.client.send(method, request, options, sink);
  }
}

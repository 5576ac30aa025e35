package io.petrel.rpc;

import io.netty.util.concurrent.FastThreadLocal;
import java.net.SocketAddress;
import java.security.Principal;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jspecify.annotations.Nullable;

/**
 * What a server handler can know about the call it is serving: method, request metadata, deadline, peer,
 * cancellation; and the metadata it sends back. Available as {@link #current()} on the thread that runs a
 * blocking handler and its interceptors, and when an asynchronous handler is invoked (capture it there if a
 * later stage needs it). A call made from a handler thread inherits this call's deadline when it is earlier, and
 * is cancelled when this call is (see {@link #cancellationCode()} for how a late answer is counted).
 */
public final class ServerContext {
  private static final Logger log = LoggerFactory.getLogger(ServerContext.class);
  /**
   * A Netty FastThreadLocal: an array slot on event loops and Netty-made threads, where direct-mode handlers
   * run; a ThreadLocal lookup elsewhere.
   */
  private static final FastThreadLocal<ServerContext> CURRENT = new FastThreadLocal<>();
  private static final Status CALLER_CANCELLED = Status.CANCELLED.withDescription("the caller cancelled the call");
  private static final Status CALLER_DEADLINE =
      Status.DEADLINE_EXCEEDED.withDescription("the caller's deadline passed");
  private static final Status DEADLINE_PASSED =
      Status.DEADLINE_EXCEEDED.withDescription("the call's deadline passed");

  private final MethodDescriptor<?, ?> method;
  private final Metadata metadata;
  private final @Nullable Deadline deadline;
  private final SocketAddress peer;
  private final int requestSize;
  private final long startNanos;
  private final List<X509Certificate> peerCertificates;
  private volatile @Nullable Principal principal;
  private volatile boolean cancelled;
  /** Why the call was cancelled (set before {@link #cancelled}): CANCELLED or DEADLINE_EXCEEDED, with a sentence. */
  private volatile Status cancelStatus = CALLER_CANCELLED;
  private volatile Metadata responseMetadata = Metadata.EMPTY;
  private @Nullable List<Runnable> cancelListeners; // guarded by this

  /** Created by transports for each incoming call on a plaintext connection. */
  public ServerContext(MethodDescriptor<?, ?> method, Metadata metadata, @Nullable Deadline deadline,
      SocketAddress peer,
      int requestSize, long startNanos) {
    this(method, metadata, deadline, peer, requestSize, startNanos, List.of());
  }

  /**
   * Created by transports for each incoming call; {@code peerCertificates} is the client's verified TLS
   * certificate chain (client certificate first), empty when there is none.
   */
  public ServerContext(MethodDescriptor<?, ?> method, Metadata metadata, @Nullable Deadline deadline,
      SocketAddress peer,
      int requestSize, long startNanos, List<X509Certificate> peerCertificates) {
    this.method = method;
    this.metadata = metadata;
    this.deadline = deadline;
    this.peer = peer;
    this.requestSize = requestSize;
    this.startNanos = startNanos;
    this.peerCertificates = peerCertificates;
  }

  /** The context of the call being served on this thread, or null outside a handler. */
  public static @Nullable ServerContext current() {
    return CURRENT.get();
  }

  /** Sets the current context and returns the previous one, to be restored with {@link #restore}. */
  public @Nullable ServerContext attach() {
    ServerContext prev = CURRENT.get();
    CURRENT.set(this);
    return prev;
  }

  /**
   * {@code task}, run with this context current ({@link #current()}) on whatever thread runs it, as on the
   * handler's own thread: a call it makes takes this call's deadline when earlier and is cancelled with this call.
   * For an asynchronous handler whose later stages call other services from other threads.
   */
  public Runnable wrap(Runnable task) {
    Objects.requireNonNull(task, "task");
    return () -> {
      ServerContext previous = attach();
      try {
        task.run();
      } finally {
        restore(previous);
      }
    };
  }

  /**
   * An executor that runs each task on {@code executor} with this context current (see {@link #wrap(Runnable)}):
   * {@code CompletableFuture.supplyAsync(() -> stub.work(request), ctx.wrap(executor))} in an asynchronous
   * handler makes the call as the handler's own thread would.
   */
  public Executor wrap(Executor executor) {
    Objects.requireNonNull(executor, "executor");
    return task -> executor.execute(wrap(task));
  }

  /** Restores the context that {@link #attach()} returned. */
  public static void restore(@Nullable ServerContext previous) {
    CURRENT.set(previous); // null rather than remove(): removal costs more, and the slot is reused
  }

  public MethodDescriptor<?, ?> method() {
    return method;
  }

  /** Metadata the caller sent. */
  public Metadata metadata() {
    return metadata;
  }

  /** The caller's deadline as seen on this server, or null if the caller set none. */
  public @Nullable Deadline deadline() {
    return deadline;
  }

  public SocketAddress peer() {
    return peer;
  }

  /**
   * The certificate chain the client presented in the TLS handshake and the server verified (mutual TLS, see
   * {@code TlsConfig.Builder.clientAuth}), the client's own certificate first. Empty on a plaintext connection
   * and when the client sent no certificate. Unmodifiable.
   */
  public List<X509Certificate> peerCertificates() {
    return peerCertificates;
  }

  /**
   * Who is calling, as far as the server has verified it: the principal an interceptor set with
   * {@link #setPrincipal} (for example {@link BearerTokenServerInterceptor}, from the token), else the subject
   * of the client's TLS certificate (an {@link javax.security.auth.x500.X500Principal}, mutual TLS), else null.
   */
  public @Nullable Principal principal() {
    Principal p = principal;
    if (p == null && !peerCertificates.isEmpty()) {
      p = peerCertificates.get(0).getSubjectX500Principal();
    }
    return p;
  }

  /**
   * Records who is calling, once an interceptor has authenticated the caller; handlers and later interceptors
   * read it with {@link #principal()}.
   */
  public void setPrincipal(Principal principal) {
    this.principal = Objects.requireNonNull(principal, "principal");
  }

  /**
   * A typed key for a value an interceptor hands to the handler (and later interceptors) through the call's
   * context, as gRPC's {@code Context.Key} does: compared by identity, so keep one per value in a constant.
   *
   * <pre>{@code
   * static final ServerContext.Key<Tenant> TENANT = ServerContext.Key.named("tenant");
   * // in a ServerInterceptor:
 * String named = chain.context().metadata().get("x-tenant");
 * if (named != null) {
 *   chain.context().put(TENANT, tenants.find(named));
 * }
   * // in the handler:         Tenant t = ServerContext.current().get(TENANT);
   * }</pre>
   *
   * @param <T> the value's type
   */
  public static final class Key<T> {
    private final String name;

    private Key(String name) {
      this.name = Objects.requireNonNull(name, "name");
    }

    /** A new key; {@code name} is for logs and {@link #toString} only (two keys of one name are two keys). */
    public static <T> Key<T> named(String name) {
      return new Key<>(name);
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** The values put with {@link #put}; made on the first put. */
  private volatile java.util.concurrent.@Nullable ConcurrentHashMap<Key<?>, Object> values;

  /**
   * Sets {@code key}'s value for this call (replacing one put before), for the handler and the interceptors after
   * this one to read with {@link #get}. Any thread.
   */
  public <T> void put(Key<T> key, T value) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    java.util.concurrent.ConcurrentHashMap<Key<?>, Object> m = values;
    if (m == null) {
      synchronized (this) {
        m = values;
        if (m == null) {
          m = new java.util.concurrent.ConcurrentHashMap<>(4);
          values = m;
        }
      }
    }
    m.put(key, value);
  }

  /** {@code key}'s value put for this call, or null if none was. Any thread. */
  @SuppressWarnings("unchecked")
  public <T> @Nullable T get(Key<T> key) {
    java.util.concurrent.ConcurrentHashMap<Key<?>, Object> m = values;
    return m == null ? null : (T) m.get(key);
  }

  /** Bytes of the request body. */
  public int requestSize() {
    return requestSize;
  }

  /** {@link System#nanoTime()} when the server read the request. */
  public long startNanos() {
    return startNanos;
  }

  /** Adds an entry to the metadata sent back with the response (or the error status). */
  public synchronized void addResponseMetadata(String key, String value) {
    responseMetadata = responseMetadata.with(key, value);
  }

  public Metadata responseMetadata() {
    return responseMetadata;
  }

  /**
   * True once nobody waits for the result: the caller cancelled or its deadline passed (the client sends a
   * CANCEL frame), or the connection closed. A handler doing long work should check it and stop.
   */
  public boolean isCancelled() {
    return cancelled || (deadline != null && deadline.isExpired());
  }

  /**
   * Why nobody waits for this call's answer any more, as the status code the server counts the call with when it
   * ends (in {@code rpc.server.calls}, the access log and server spans), whatever the handler answered:
   * {@link Status.Code#DEADLINE_EXCEEDED} once the caller's deadline has passed (as this server reads it, or as the
   * caller said when it cancelled the call), else {@link Status.Code#CANCELLED} once the caller cancelled the call or
   * its connection closed; null while the caller still waits.
   */
  public Status.@Nullable Code cancellationCode() {
    return cancellationCode(System.nanoTime());
  }

  /** {@link #cancellationCode()} at {@code nowNanos}, a {@link System#nanoTime()} reading. */
  public Status.@Nullable Code cancellationCode(long nowNanos) {
    Status s = cancellationStatus(nowNanos);
    return s == null ? null : s.code();
  }

  /**
   * {@link #cancellationCode()} with why, in a sentence for logs and error messages: "the caller cancelled the
   * call", "the caller's deadline passed", "the call's deadline passed" (as this server reads it), "the connection
   * from /10.0.0.7:51234 closed", "the server closed the connection from /10.0.0.7:51234: the server shut down and
   * its shutdown grace period ended", and so on; null while the caller still waits. The code is always CANCELLED
   * or DEADLINE_EXCEEDED, the one {@link #cancellationCode()} gives.
   */
  public @Nullable Status cancellationStatus() {
    return cancellationStatus(System.nanoTime());
  }

  /** {@link #cancellationStatus()} at {@code nowNanos}, a {@link System#nanoTime()} reading. */
  public @Nullable Status cancellationStatus(long nowNanos) {
    Deadline d = deadline;
    boolean expired = d != null && nowNanos - d.nanoTime() >= 0;
    if (cancelled) {
      Status s = cancelStatus;
      return expired && s.code() != Status.Code.DEADLINE_EXCEEDED ? DEADLINE_PASSED : s;
    }
    return expired ? DEADLINE_PASSED : null;
  }

  /**
   * Runs {@code listener} when the call is cancelled (at once if it already is), on the thread that learns
   * of it: an event loop, so the listener must be quick and must not block.
   */
  public void onCancel(Runnable listener) {
    synchronized (this) {
      if (!cancelled) {
        if (cancelListeners == null) {
          cancelListeners = new ArrayList<>(2);
        }
        cancelListeners.add(listener);
        return;
      }
    }
    runListener(listener);
  }

  /**
   * Removes a listener added with {@link #onCancel} that has not run; true if it was there. A listener that
   * guards something which ends before the call (a call made on behalf of this one: see
   * {@link RpcClient}) is removed when that ends, so that a handler making many such calls keeps none of them.
   */
  public boolean removeCancelListener(Runnable listener) {
    synchronized (this) {
      return cancelListeners != null && cancelListeners.remove(listener);
    }
  }

  /**
   * Marks the call cancelled and runs the listeners once, as its caller cancelled it. Called by transports; a
   * transport that cancels a call for another reason (its connection closed) says so with {@link #cancel(Status)}.
   */
  public void cancel() {
    cancel(CALLER_CANCELLED);
  }

  /**
   * Marks the call cancelled for {@code reason} and runs the listeners once. Called by transports: with
   * {@link Status.Code#DEADLINE_EXCEEDED} when the caller says its deadline passed (which may come before this
   * server's reading of the deadline has passed), else {@link Status.Code#CANCELLED}; any other code counts as
   * CANCELLED.
   */
  public void cancel(Status.Code reason) {
    cancel(reason == Status.Code.DEADLINE_EXCEEDED ? CALLER_DEADLINE : CALLER_CANCELLED);
  }

  /**
   * Marks the call cancelled with {@code why} (see {@link #cancellationStatus()}) and runs the listeners once.
   * Called by transports, with a description saying what ended the call (the caller, its deadline, its
   * connection); a code other than DEADLINE_EXCEEDED counts as CANCELLED.
   */
  public void cancel(Status why) {
    boolean deadline = why.code() == Status.Code.DEADLINE_EXCEEDED;
    Status normal = why.description() == null ? (deadline ? CALLER_DEADLINE : CALLER_CANCELLED)
        : deadline || why.code() == Status.Code.CANCELLED ? why
        : Status.CANCELLED.withDescription(why.description());
    List<Runnable> listeners;
    synchronized (this) {
      if (cancelled) {
        return;
      }
      cancelStatus = normal;
      cancelled = true;
      listeners = cancelListeners;
      cancelListeners = null;
    }
    if (listeners != null) {
      for (Runnable r : listeners) {
        runListener(r);
      }
    }
  }

  private void runListener(Runnable r) {
    try {
      r.run();
    } catch (RuntimeException e) {
      log.warn("cancellation listener of {} threw", method.fullName(), e);
    }
  }
}

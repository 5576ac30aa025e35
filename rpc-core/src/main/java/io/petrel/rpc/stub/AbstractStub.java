package io.petrel.rpc.stub;

import io.petrel.rpc.CallOptions;
import io.petrel.rpc.ClientInterceptor;
import io.petrel.rpc.Deadline;
import io.petrel.rpc.Metadata;
import io.petrel.rpc.RpcClient;
import java.time.Duration;
import java.util.Objects;

/**
 * Base of generated client stubs: a client plus the call options every call of this stub uses. Immutable;
 * the {@code with} methods return a new stub of the same type.
 *
 * @param <S> the concrete stub type
 */
public abstract class AbstractStub<S extends AbstractStub<S>> {
  protected final RpcClient client;
  protected final CallOptions options;

  protected AbstractStub(RpcClient client, CallOptions options) {
    this.client = Objects.requireNonNull(client, "client");
    this.options = Objects.requireNonNull(options, "options");
  }

  /** A new stub of the concrete type with the given options. */
  protected abstract S build(RpcClient client, CallOptions options);

  /** Calls through the returned stub must end {@code timeout} after each call starts. */
  public final S withDeadline(Duration timeout) {
    return build(client, options.withTimeout(timeout));
  }

  /** Calls through the returned stub must end by the given absolute deadline. */
  public final S withDeadline(Deadline deadline) {
    return build(client, options.withDeadline(deadline));
  }

  /** Calls through the returned stub also send this metadata. */
  public final S withMetadata(Metadata metadata) {
    return build(client, options.withMetadata(metadata));
  }

  /** Calls through the returned stub also pass through these interceptors (after the client's own). */
  public final S withInterceptors(ClientInterceptor... interceptors) {
    return build(client, options.withInterceptors(interceptors));
  }

  /**
   * Calls through the returned stub carry {@code key} to the load balancer: with {@code consistent_hash}, calls with
   * one key go to one server (see {@link CallOptions#withHashKey}); the other built-in balancers ignore it.
   */
  public final S withHashKey(String key) {
    return build(client, options.withHashKey(key));
  }

  /**
   * Calls through the returned stub use {@code options} in place of all of this stub's (its deadline, metadata,
   * interceptors and listeners are not kept). To add an option to those, start from them:
   * {@code stub.withOptions(stub.callOptions().withResponseMetadataListener(listener))}.
   */
  public final S withOptions(CallOptions options) {
    return build(client, options);
  }

  public final CallOptions callOptions() {
    return options;
  }

  public final RpcClient client() {
    return client;
  }
}

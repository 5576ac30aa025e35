package io.petrel.rpc;

import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A typed option of one transport, set on a builder with {@code option(key, value)} and read by that transport
 * from its config. A transport declares its keys as constants (the Netty transport's are in
 * {@code io.petrel.rpc.transport.netty.NettyOptions}); the core carries every key it is given and checks its
 * value when it is set, so a bad value fails at the builder, naming the option. A transport ignores keys that
 * are not its own (so a builder may carry options for whichever transport is selected).
 *
 * @param <T> the option's value type
 */
public final class TransportOption<T extends @Nullable Object> {
  private final String name;
  private final Class<?> type;
  private final T defaultValue;
  private final Consumer<? super T> check;

  private TransportOption(String name, Class<?> type, T defaultValue, Consumer<? super T> check) {
    this.name = Objects.requireNonNull(name, "name");
    this.type = Objects.requireNonNull(type, "type");
    this.defaultValue = defaultValue;
    this.check = Objects.requireNonNull(check, "check");
    if (defaultValue != null) {
      check.accept(defaultValue);
    }
  }

  /**
   * A new key. {@code check} throws {@link IllegalArgumentException} for a value out of range, with a message
   * that names the option, the value and what is allowed (it is also applied to the default).
   */
  public static <T extends @Nullable Object> TransportOption<T> of(String name, Class<?> type, T defaultValue,
      Consumer<? super T> check) {
    return new TransportOption<>(name, type, defaultValue, check);
  }

  /** A key whose values need no check beyond their type; a null default means "not set". */
  public static <T extends @Nullable Object> TransportOption<T> of(String name, Class<?> type, T defaultValue) {
    return new TransportOption<>(name, type, defaultValue, v -> {});
  }

  /** The option's name, as in messages and docs (e.g. {@code "netty.ioMode"}). */
  public String name() {
    return name;
  }

  public Class<?> type() {
    return type;
  }

  /** What a config answers when the option was not set (null: not set). */
  public T defaultValue() {
    return defaultValue;
  }

  /** Checks {@code value} for this option; returns it. */
  T validate(T value) {
    Objects.requireNonNull(value, name);
    if (!type.isInstance(value)) {
      throw new IllegalArgumentException(name + " takes a " + type.getSimpleName() + ", not a "
          + value.getClass().getSimpleName());
    }
    check.accept(value);
    return value;
  }

  @Override
  public String toString() {
    return name;
  }
}

package io.petrel.rpc;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Describes one remote method: its service and method names, the numeric id carried in every request frame,
 * the call type, and the marshallers of its request and response. Immutable and cheap to share; generated
 * code holds one per method in a static field.
 *
 * @param <Req> the request type
 * @param <Resp> the response type ({@code Void} for oneway methods)
 */
public final class MethodDescriptor<Req, Resp> {
  private final String serviceName;
  private final String methodName;
  private final String fullName;
  private final int id;
  private final MethodType type;
  private final Marshaller<Req> requestMarshaller;
  private final @Nullable Marshaller<Resp> responseMarshaller;
  private final boolean idempotent;
  private final long defaultTimeoutNanos;
  private final List<String> declaredExceptions;

  private MethodDescriptor(Builder<Req, Resp> b) {
    this.serviceName = requireName(b.serviceName, "serviceName");
    this.methodName = requireName(b.methodName, "methodName");
    this.fullName = serviceName + "/" + methodName;
    this.id = b.id != null ? b.id : methodId(serviceName, methodName);
    this.type = Objects.requireNonNull(b.type, "type");
    this.requestMarshaller = Objects.requireNonNull(b.requestMarshaller, "requestMarshaller");
    this.responseMarshaller = b.responseMarshaller;
    if (type == MethodType.UNARY && responseMarshaller == null) {
      throw new IllegalArgumentException(fullName + ": a UNARY method needs a responseMarshaller");
    }
    this.idempotent = b.idempotent;
    this.defaultTimeoutNanos = b.defaultTimeoutNanos;
    this.declaredExceptions = b.declaredExceptions;
  }

  private static String requireName(@Nullable String s, String what) {
    Objects.requireNonNull(s, what);
    if (s.isEmpty() || s.indexOf('/') >= 0) {
      throw new IllegalArgumentException(what + " must be non-empty and contain no '/': '" + s + "'");
    }
    return s;
  }

  /**
   * The stable numeric id of a method: FNV-1a (32 bit) over the UTF-8 bytes of {@code service + "/" + method},
   * with 0 (reserved) mapped to 1. The codegen plugin computes the same function and fails the build on a
   * collision within a service; a server rejects two registered methods with the same id.
   */
  public static int methodId(String serviceName, String methodName) {
    byte[] bytes = (serviceName + "/" + methodName).getBytes(StandardCharsets.UTF_8);
    int h = 0x811c9dc5;
    for (byte b : bytes) {
      h ^= (b & 0xff);
      h *= 0x01000193;
    }
    return h == 0 ? 1 : h;
  }

  public static <Req, Resp> Builder<Req, Resp> newBuilder() {
    return new Builder<>();
  }

  public String serviceName() {
    return serviceName;
  }

  public String methodName() {
    return methodName;
  }

  /** {@code service/method}. */
  public String fullName() {
    return fullName;
  }

  public int id() {
    return id;
  }

  public MethodType type() {
    return type;
  }

  public Marshaller<Req> requestMarshaller() {
    return requestMarshaller;
  }

  /** The response marshaller; null for oneway methods. */
  public @Nullable Marshaller<Resp> responseMarshaller() {
    return responseMarshaller;
  }

  public boolean isIdempotent() {
    return idempotent;
  }

  /** The method's own default timeout in nanoseconds, 0 when the client's default applies. */
  public long defaultTimeoutNanos() {
    return defaultTimeoutNanos;
  }

  /**
   * The binary class names ({@link Class#getName()}) of the exceptions the method declares, in the order given;
   * empty if none (the default). With the server's default {@link ExceptionDetails#DECLARED}, only an exception
   * that is an instance of one of these sends its class names and message to the caller. Generated code lists
   * the declared exceptions its stub rethrows as their own type.
   */
  public List<String> declaredExceptions() {
    return declaredExceptions;
  }

  @Override
  public String toString() {
    return fullName + " (id 0x" + Integer.toHexString(id) + ", " + type + ")";
  }

  /** Builds a {@link MethodDescriptor}. */
  public static final class Builder<Req, Resp> {
    private @Nullable String serviceName;
    private @Nullable String methodName;
    private @Nullable Integer id;
    private MethodType type = MethodType.UNARY;
    private @Nullable Marshaller<Req> requestMarshaller;
    private @Nullable Marshaller<Resp> responseMarshaller;
    private boolean idempotent;
    private long defaultTimeoutNanos;
    private List<String> declaredExceptions = List.of();

    private Builder() {}

    public Builder<Req, Resp> serviceName(String serviceName) {
      this.serviceName = serviceName;
      return this;
    }

    public Builder<Req, Resp> methodName(String methodName) {
      this.methodName = methodName;
      return this;
    }

    /** Overrides the id derived by {@link #methodId}; needed only to resolve a collision by hand. */
    public Builder<Req, Resp> id(int id) {
      if (id == 0) {
        throw new IllegalArgumentException("method id 0 is reserved");
      }
      this.id = id;
      return this;
    }

    public Builder<Req, Resp> type(MethodType type) {
      this.type = type;
      return this;
    }

    public Builder<Req, Resp> requestMarshaller(Marshaller<Req> m) {
      this.requestMarshaller = m;
      return this;
    }

    public Builder<Req, Resp> responseMarshaller(Marshaller<Resp> m) {
      this.responseMarshaller = m;
      return this;
    }

    public Builder<Req, Resp> idempotent(boolean idempotent) {
      this.idempotent = idempotent;
      return this;
    }

    public Builder<Req, Resp> defaultTimeout(Duration timeout) {
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("defaultTimeout must be >= 0: " + timeout);
      }
      this.defaultTimeoutNanos = timeout.toNanos();
      return this;
    }

    /**
     * The exceptions the method declares, by binary class name ({@code "com.example.NotFoundException"}, a nested
     * class {@code "com.example.Svc$NotFound"}); replaces those set before. See
     * {@link MethodDescriptor#declaredExceptions()}.
     */
    public Builder<Req, Resp> declaredExceptions(String... classNames) {
      for (String name : classNames) {
        Objects.requireNonNull(name, "declaredExceptions: a class name is null");
        if (name.isBlank()) {
          throw new IllegalArgumentException("declaredExceptions: a class name is blank; give binary class names"
              + " such as \"com.example.NotFoundException\"");
        }
      }
      this.declaredExceptions = List.of(classNames);
      return this;
    }

    public MethodDescriptor<Req, Resp> build() {
      return new MethodDescriptor<>(this);
    }
  }
}

package io.petrel.rpc;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The server side of one service: its name and a handler per method. Generated code builds one with
 * {@code FooRpc.bind(impl)}; by hand it is {@code ServiceDefinition.builder("demo.Greeter").unary(...).build()}.
 */
public final class ServiceDefinition {
  private final String name;
  private final List<ServerMethodDefinition<?, ?>> methods;

  private ServiceDefinition(String name, List<ServerMethodDefinition<?, ?>> methods) {
    this.name = name;
    this.methods = Collections.unmodifiableList(methods);
  }

  public static Builder builder(String serviceName) {
    return new Builder(serviceName);
  }

  public String name() {
    return name;
  }

  public List<ServerMethodDefinition<?, ?>> methods() {
    return methods;
  }

  /** Builds a {@link ServiceDefinition}; rejects methods of another service and duplicate names or ids. */
  public static final class Builder {
    private final String name;
    private final Map<String, ServerMethodDefinition<?, ?>> byName = new LinkedHashMap<>();

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "serviceName");
    }

    /** Adds a blocking method. */
    public <Req, Resp> Builder unary(MethodDescriptor<Req, Resp> method, UnaryHandler<Req, Resp> handler) {
      return add(ServerMethodDefinition.of(method, handler));
    }

    /** Adds a non-blocking method. */
    public <Req, Resp> Builder async(MethodDescriptor<Req, Resp> method, AsyncUnaryHandler<Req, Resp> handler) {
      return add(ServerMethodDefinition.ofAsync(method, handler));
    }

    public Builder add(ServerMethodDefinition<?, ?> def) {
      MethodDescriptor<?, ?> m = def.method();
      if (!m.serviceName().equals(name)) {
        throw new IllegalArgumentException(
            "method " + m.fullName() + " belongs to service " + m.serviceName() + ", not " + name);
      }
      for (ServerMethodDefinition<?, ?> other : byName.values()) {
        if (other.method().id() == m.id()) {
          throw new IllegalArgumentException("method " + m.fullName() + " has the same id 0x"
              + Integer.toHexString(m.id()) + " as " + other.method().fullName()
              + "; rename one or set an explicit id with MethodDescriptor.Builder.id(int)");
        }
      }
      if (byName.putIfAbsent(m.methodName(), def) != null) {
        throw new IllegalArgumentException("method " + m.fullName() + " is added twice");
      }
      return this;
    }

    public ServiceDefinition build() {
      return new ServiceDefinition(name, new ArrayList<>(byName.values()));
    }
  }
}

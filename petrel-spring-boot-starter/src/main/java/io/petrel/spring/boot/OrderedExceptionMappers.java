package io.petrel.spring.boot;

import io.petrel.rpc.ExceptionMapper;
import io.petrel.rpc.MethodDescriptor;
import io.petrel.rpc.Status;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The context's {@link ExceptionMapper} beans as the server's one mapper: each is asked in their {@code @Order}, and
 * the first status one returns is the caller's; when every one returns null, the default (UNKNOWN) applies.
 */
final class OrderedExceptionMappers implements ExceptionMapper {
  private final List<ExceptionMapper> mappers;

  private OrderedExceptionMappers(List<ExceptionMapper> mappers) {
    this.mappers = List.copyOf(mappers);
  }

  /** The server's mapper for these beans (in order): null for none, the bean itself for one. */
  static @Nullable ExceptionMapper of(List<ExceptionMapper> mappers) {
    if (mappers.isEmpty()) {
      return null;
    }
    return mappers.size() == 1 ? mappers.get(0) : new OrderedExceptionMappers(mappers);
  }

  @Override
  public @Nullable Status toStatus(MethodDescriptor<?, ?> method, Throwable exception) {
    for (ExceptionMapper m : mappers) {
      Status status = m.toStatus(method, exception);
      if (status != null) {
        return status;
      }
    }
    return null;
  }

  @Override
  public String toString() {
    return "the ExceptionMapper beans in their @Order " + mappers;
  }
}

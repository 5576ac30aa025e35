package io.petrel.codegen;

import java.util.List;

/**
 * What one run did.
 *
 * @param services the fully qualified names of the service interfaces generated
 * @param upToDate true when the inputs had not changed and nothing was read or written
 * @param written files whose content changed (or that are new)
 * @param unchanged files regenerated with the same content, left untouched so that their timestamps stay
 * @param deleted stale files from an earlier run that no service produces any more
 */
public record CodegenResult(
    List<String> services, boolean upToDate, List<String> written, List<String> unchanged, List<String> deleted) {

  public CodegenResult {
    services = List.copyOf(services);
    written = List.copyOf(written);
    unchanged = List.copyOf(unchanged);
    deleted = List.copyOf(deleted);
  }
}

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
 * @param warnings what the services declare that is accepted but has no effect or cannot work as written; an
 *     up-to-date run repeats the warnings of the run that generated the files
 */
public record CodegenResult(
    List<String> services, boolean upToDate, List<String> written, List<String> unchanged, List<String> deleted,
    List<Problem> warnings) {

  public CodegenResult {
    services = List.copyOf(services);
    written = List.copyOf(written);
    unchanged = List.copyOf(unchanged);
    deleted = List.copyOf(deleted);
    warnings = List.copyOf(warnings);
  }
}

package io.petrel.rpc.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Reads a named value of an enum from the command line (any case), or says which values there are. */
final class EnumArgs {
  private EnumArgs() {}

  /**
   * The constant of {@code type} named {@code value} in any case; otherwise an {@link IllegalArgumentException}
   * naming the option, the value and every valid one.
   */
  static <E extends Enum<E>> E parse(Class<E> type, String value, String option) {
    String v = value.trim();
    for (E e : type.getEnumConstants()) {
      if (e.name().equalsIgnoreCase(v)) {
        return e;
      }
    }
    throw new IllegalArgumentException("unknown " + option + " '" + v + "': one of " + names(type, false));
  }

  /** The constants' names, lower case ("petrel, petrel_direct, ...") or as JMH takes them ("PETREL, ..."). */
  static <E extends Enum<E>> String names(Class<E> type, boolean upper) {
    List<String> out = new ArrayList<>();
    for (E e : type.getEnumConstants()) {
      out.add(upper ? e.name() : e.name().toLowerCase(Locale.ROOT));
    }
    return String.join(", ", out);
  }
}

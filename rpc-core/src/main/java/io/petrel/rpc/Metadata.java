package io.petrel.rpc;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Key/value pairs sent with a request or a response, beside the body: string keys (lower-case ASCII letters,
 * digits, '-', '_' and '.'), each value either a string or bytes. Keys may repeat. Immutable: the
 * {@code with} methods return a copy. The encoded size is bounded by the transport's {@code maxMetadataSize}.
 */
public final class Metadata {

  /** No entries. */
  public static final Metadata EMPTY = new Metadata(new Entry[0]);

  /** One entry: a key and a string or a binary value. */
  public record Entry(String key, @Nullable String stringValue, byte @Nullable [] binaryValue) {
    public boolean isBinary() {
      return binaryValue != null;
    }

    /** The value as bytes: UTF-8 of a string value, or the binary value itself (not copied). */
    public byte[] valueBytes() {
      return binaryValue != null ? binaryValue
          : Objects.requireNonNull(stringValue, "a string or a binary value").getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Entry e
          && e.key.equals(key)
          && Objects.equals(e.stringValue, stringValue)
          && Arrays.equals(e.binaryValue, binaryValue);
    }

    @Override
    public int hashCode() {
      return Objects.hash(key, stringValue, Arrays.hashCode(binaryValue));
    }

    @Override
    public String toString() {
      return key + "=" + (binaryValue != null ? "<" + binaryValue.length + " bytes>" : stringValue);
    }
  }

  private final Entry[] entries;

  private Metadata(Entry[] entries) {
    this.entries = entries;
  }

  /** Metadata with one string entry. */
  public static Metadata of(String key, String value) {
    return EMPTY.with(key, value);
  }

  /** A copy with a string entry added. */
  public Metadata with(String key, String value) {
    checkKey(key);
    Objects.requireNonNull(value, "value");
    return append(new Entry(key, value, null));
  }

  /** A copy with a binary entry added (the array is copied). */
  public Metadata withBinary(String key, byte[] value) {
    checkKey(key);
    Objects.requireNonNull(value, "value");
    return append(new Entry(key, null, value.clone()));
  }

  /** A copy with every entry of {@code other} appended. */
  public Metadata withAll(Metadata other) {
    if (other.entries.length == 0) {
      return this;
    }
    if (entries.length == 0) {
      return other;
    }
    Entry[] copy = Arrays.copyOf(entries, entries.length + other.entries.length);
    System.arraycopy(other.entries, 0, copy, entries.length, other.entries.length);
    return new Metadata(copy);
  }

  private Metadata append(Entry e) {
    Entry[] copy = Arrays.copyOf(entries, entries.length + 1);
    copy[entries.length] = e;
    return new Metadata(copy);
  }

  /** Builds metadata from decoded entries without re-checking keys (used by transports after validation). */
  public static Metadata fromEntries(List<Entry> list) {
    return list.isEmpty() ? EMPTY : new Metadata(list.toArray(new Entry[0]));
  }

  /** The last string value for the key, or null. */
  public @Nullable String get(String key) {
    for (int i = entries.length - 1; i >= 0; i--) {
      Entry e = entries[i];
      if (e.key.equals(key)) {
        return e.binaryValue != null ? new String(e.binaryValue, StandardCharsets.UTF_8) : e.stringValue;
      }
    }
    return null;
  }

  /** The last binary value for the key (a copy), or null. */
  public byte @Nullable [] getBinary(String key) {
    for (int i = entries.length - 1; i >= 0; i--) {
      Entry e = entries[i];
      if (e.key.equals(key)) {
        return e.valueBytes().clone();
      }
    }
    return null;
  }

  /** All string values for the key, in order. */
  public List<String> getAll(String key) {
    List<String> out = new ArrayList<>(2);
    for (Entry e : entries) {
      if (e.key.equals(key)) {
        out.add(e.binaryValue != null ? new String(e.binaryValue, StandardCharsets.UTF_8) : e.stringValue);
      }
    }
    return out;
  }

  public boolean isEmpty() {
    return entries.length == 0;
  }

  public int size() {
    return entries.length;
  }

  public List<Entry> entries() {
    return Collections.unmodifiableList(Arrays.asList(entries));
  }

  /**
   * Checks a key: 1 to 255 characters of {@code a-z 0-9 - _ .}. Lower case only, so that keys compare the
   * same way on every side.
   */
  public static void checkKey(String key) {
    Objects.requireNonNull(key, "key");
    if (key.isEmpty() || key.length() > 255) {
      throw new IllegalArgumentException("metadata key must be 1 to 255 characters: '" + key + "'");
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
      if (!ok) {
        throw new IllegalArgumentException(
            "metadata key '" + key + "' has character '" + c + "' at " + i
                + "; keys use lower-case a-z, 0-9, '-', '_' and '.'");
      }
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Metadata m && Arrays.equals(m.entries, entries);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(entries);
  }

  @Override
  public String toString() {
    return Arrays.toString(entries);
  }
}

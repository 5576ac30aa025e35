package it.clock;

/** A main type that the test service uses: resolved from the module's own classes. */
public enum Zone {
  UTC,
  LOCAL
}

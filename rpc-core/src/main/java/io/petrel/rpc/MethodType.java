package io.petrel.rpc;

/** How a method is called. */
public enum MethodType {
  /** One request, one response (or a status). */
  UNARY,
  /** One request, no response: fire and forget. */
  ONEWAY
}

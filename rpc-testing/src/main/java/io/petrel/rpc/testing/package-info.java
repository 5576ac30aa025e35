/**
 * Testing Petrel services: {@link io.petrel.rpc.testing.PetrelServerExtension} (a server and client per test,
 * in-process by default), {@link io.petrel.rpc.testing.CallFailures} (asserting a failed call's status and
 * message) and {@link io.petrel.rpc.testing.AbstractTransportTest} (the conformance suite every transport runs).
 */
@NullMarked
package io.petrel.rpc.testing;

import org.jspecify.annotations.NullMarked;

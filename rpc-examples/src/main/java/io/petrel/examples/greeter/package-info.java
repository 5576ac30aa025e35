/** The greeter example: a service, its server and client, sync, async and oneway calls. */
@NullMarked
package io.petrel.examples.greeter;

import org.jspecify.annotations.NullMarked;

/** The cluster example: three servers registered in ZooKeeper, one client following them, one server leaving. */
@NullMarked
package io.petrel.examples.cluster;

import org.jspecify.annotations.NullMarked;

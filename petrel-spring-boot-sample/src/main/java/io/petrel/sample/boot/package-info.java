/** A Spring Boot application served and called through petrel-spring-boot-starter. */
@NullMarked
package io.petrel.sample.boot;

import org.jspecify.annotations.NullMarked;

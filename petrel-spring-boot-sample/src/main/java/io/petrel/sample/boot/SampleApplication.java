package io.petrel.sample.boot;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * Serves {@link Greeter} and {@link Frontdesk} on {@code petrel.server.port} (application.properties) and calls
 * Frontdesk through the client {@code petrel.clients.frontdesk}, which points at this same server.
 */
@SpringBootApplication
public class SampleApplication {
  public static void main(String[] args) {
    SpringApplication.run(SampleApplication.class, args);
  }
}

package io.petrel.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.Version;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The starter's tests run with the Netty that Spring Boot's dependency management brings (this module imports
 * Boot's BOM, as a Boot application does), not the one Petrel's other modules are built with: every Netty artifact
 * on the class path must then be of that one version, and Petrel's transport must work on it (the other tests of
 * this module call over real sockets).
 */
class NettyVersionTest {
  @Test
  void everyNettyArtifactOnTheClassPathIsOfOneVersionThatOfBootsDependencyManagement() {
    Map<String, Version> artifacts = Version.identify();
    assertThat(artifacts).containsKeys("netty-common", "netty-buffer", "netty-transport", "netty-handler",
        "netty-codec-base");
    Map<String, String> versions = artifacts.values().stream()
        .collect(Collectors.toMap(Version::artifactId, Version::artifactVersion));
    assertThat(versions.values()).as("Netty versions on the class path: %s", versions).containsOnly(
        System.getProperty("boot.netty.version"));
  }
}

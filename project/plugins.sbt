// Resolved from Maven Central only (see dev/sbt-repositories).
addSbtPlugin("com.eed3si9n" % "sbt-assembly" % "2.3.1")
// Formatting (.scalafmt.conf), checked by dev/test.
addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.4")

"""Turns a JVM exception raised through Py4J into a one-line FermionToolError."""


def call(fn):
    from fermion_spark.tools import FermionToolError
    try:
        return fn()
    except Exception as e:  # py4j.protocol.Py4JJavaError carries the Java exception
        java = getattr(e, "java_exception", None)
        if java is None:
            raise
        raise FermionToolError(f"{java.getClass().getSimpleName()}: {java.getMessage()}") from None

"""Device drivers: transports (serial, USB), codecs (bytes to messages, no I/O) and one driver
per device class, all emitting the vendor-neutral events of :mod:`drivers.events`."""

"""The firmware simulator: every tablectl device class, with no hardware."""

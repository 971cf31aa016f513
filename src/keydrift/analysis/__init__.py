"""Framework-independent analysis machinery: values, key accesses, key flow."""

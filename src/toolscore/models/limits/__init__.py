"""What bounds the client's calls: retries, deadlines, and limits shared by processes."""

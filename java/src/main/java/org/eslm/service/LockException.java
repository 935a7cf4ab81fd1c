package org.eslm.service;

import org.elasticsearch.ElasticsearchException;
import org.elasticsearch.common.io.stream.StreamInput;
import org.elasticsearch.common.io.stream.StreamOutput;
import org.elasticsearch.rest.RestStatus;

import java.io.IOException;

/**
 * Base of the plugin's lock outcomes. Each subclass fixes its HTTP status; Elasticsearch renders
 * the class name as the error {@code type} ({@code LockConflictException} becomes
 * {@code lock_conflict_exception}) and each {@code es.*} metadata entry as an extra field.
 */
public abstract class LockException extends ElasticsearchException {
    private static final long serialVersionUID = 1L;

    protected LockException(String message) {
        super(message);
    }

    protected LockException(StreamInput in) throws IOException {
        super(in);
    }

    @Override
    protected void writeTo(StreamOutput out, Writer<Throwable> nestedExceptionsWriter) throws IOException {
        super.writeTo(out, nestedExceptionsWriter);
    }

    @Override
    public abstract RestStatus status();
}

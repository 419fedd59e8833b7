// Redfish error bodies the way BMCs send them: `error.@Message.ExtendedInfo[]` with Base registry ids.

export class BmcHttpError extends Error {
  constructor(
    readonly status: number,
    readonly messageId: string,
    message: string,
    readonly resolution = '',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export function errorBody(status: number, messageId: string, message: string, resolution = ''): Record<string, unknown> {
  return {
    error: {
      code: status >= 500 ? 'Base.1.8.GeneralError' : `Base.1.8.${messageId}`,
      message: 'A general error has occurred. See ExtendedInfo for more information.',
      '@Message.ExtendedInfo': [
        {
          '@odata.type': '#Message.v1_1_1.Message',
          MessageId: `Base.1.8.${messageId}`,
          Message: message,
          Severity: status >= 500 ? 'Critical' : 'Warning',
          MessageSeverity: status >= 500 ? 'Critical' : 'Warning',
          Resolution: resolution,
        },
      ],
    },
  };
}

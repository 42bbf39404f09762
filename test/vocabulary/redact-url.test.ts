import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/vocabulary/redact-url.js';

describe('redactUrl, the one URL redactor', () => {
  const url = 'postgres://mirror:s3cret@db.example:5432/understudy?sslmode=require&token=abc#x';
  it('hides the password and keeps the rest (password)', () => {
    expect(redactUrl(url, 'password', '?')).toBe(
      'postgres://mirror:***@db.example:5432/understudy?sslmode=require&token=abc#x',
    );
  });
  it('drops user and password (credentials)', () => {
    expect(redactUrl('https://u:p@api.example/partners/', 'credentials', '?')).toBe('https://api.example/partners/');
  });
  it('keeps scheme, host and path only (location)', () => {
    expect(redactUrl(url, 'location', '?')).toBe('postgres://db.example:5432/understudy');
  });
  it('never echoes what is not a URL', () => {
    for (const shown of ['password', 'credentials', 'location'] as const)
      expect(redactUrl('s3cret not a url', shown, '(not a URL)')).toBe('(not a URL)');
  });
});

/**
 * The rules for a password someone chooses (docs/sign-in.md). One place for both
 * sides: better-auth enforces them on its endpoints (createAuth in packages/api), and the account
 * page checks them before it asks the server, so a mistake is explained at once. Sign-in checks
 * only the maximum, so an older, shorter password keeps working until its owner changes it.
 */
export const MIN_PASSWORD_LENGTH = 12;
/** better-auth's default maximum, stated here so the form knows it too. */
export const MAX_PASSWORD_LENGTH = 128;

export interface PasswordChange {
  currentPassword: string;
  newPassword: string;
  confirmPassword: string;
}

/** What is wrong with a password change before it is sent, or null when it may be sent. */
export function passwordChangeProblem({
  currentPassword,
  newPassword,
  confirmPassword,
}: PasswordChange): string | null {
  if (currentPassword === "") return "Enter your current password.";
  if (newPassword.length < MIN_PASSWORD_LENGTH) {
    return `The new password needs at least ${MIN_PASSWORD_LENGTH} characters (it has ${newPassword.length}).`;
  }
  if (newPassword.length > MAX_PASSWORD_LENGTH) {
    return `The new password can have at most ${MAX_PASSWORD_LENGTH} characters.`;
  }
  if (newPassword !== confirmPassword) return "The new password and its confirmation do not match.";
  if (newPassword === currentPassword) return "The new password is the same as the current one; choose another.";
  return null;
}
